"""The flow stream beside the RGB maps: a flow recognizer's maps on the flow stacks of an RGB
clip's segments (:mod:`dissect.flow_cam`: the stack of segment ``t`` starts at the RGB frame
sampled for it), over the clip's pixels."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np

from .recognition import ClipInput, LoadedRecognizer, load_recognizer

__all__ = ["FlowMaps", "load_flow_recognizer", "video_flow_folder", "flow_maps", "flow_caption"]


@dataclass
class FlowMaps:
    """The flow stream on a clip: raw ``maps (T, S, S)`` on the RGB clip's pixels, the flow
    fields each segment stacks ``indices (T, L)`` (0-based), the class explained (its name),
    the map ``method`` and the clip's class probabilities ``probs (K,)`` (None when not stored)."""

    maps: np.ndarray
    indices: np.ndarray
    explained: str
    method: str = "cam"
    probs: Optional[np.ndarray] = None


def load_flow_recognizer(path: Path) -> LoadedRecognizer:
    """A flow recognizer (``2 * new_length`` input channels); ValueError naming the file when
    it cannot be loaded or is not a flow model."""
    from dissect.flow_cam import flow_new_length

    rec = load_recognizer(Path(path))
    flow_new_length(vars(rec.model.config), Path(path).name)
    return rec


def video_flow_folder(flow_data: Path, video_path: Optional[Path], name: str) -> Path:
    """The video's flow folder: ``flow_data`` when it holds ``flow_x_00001.jpg``, else where
    ``tsm flow extract ... --out flow_data`` put the video (``video_path``'s name)."""
    from dissect.flow_cam import video_flow_folder as resolve

    path = Path(video_path) if video_path is not None else None
    return resolve(
        Path(flow_data).expanduser(), path.name if path else name, bool(path and path.is_file())
    )


def flow_maps(
    rec: LoadedRecognizer,
    folder: Path,
    clip: ClipInput,
    size: int,
    method: str = "cam",
    class_idx: Optional[int] = None,
    num_frames: Optional[int] = None,
    video: str = "the video",
) -> FlowMaps:
    """``method``'s maps of the flow recognizer ``rec`` on the flow stacks of ``clip``'s
    segments (``clip.indices``), cropped like the clip; ``class_idx`` None or outside the flow
    model's classes: its own top-1. ``num_frames``: check the folder against the video first."""
    import torch

    from dissect.flow_cam import compute_flow_maps, flow_new_length, load_flow_clip

    new_length = flow_new_length(vars(rec.model.config), rec.path.name)
    fclip = load_flow_clip(folder, clip.indices, new_length, clip.protocol, num_frames, video)
    cls = class_idx if class_idx is not None and 0 <= class_idx < len(rec.names) else None
    out = compute_flow_maps(rec.model, fclip, method, cls)
    probs = torch.softmax(out.logits[0].detach().float(), 0).cpu().numpy()
    return FlowMaps(
        out.maps[0].detach().float().cpu().numpy(),
        fclip.indices,
        str(rec.names[int(out.classes[0])]),
        method,
        probs,
    )


def flow_caption(flow: FlowMaps, i: int) -> str:
    """``flow frame i/n: flow fields a-b (...); cam of 'class'`` for frame ``i`` of the clip."""
    row = flow.indices[i]
    return (
        f"flow frame {i}/{len(flow.indices) - 1}: flow fields {int(row[0])}-{int(row[-1])} "
        f"(from the RGB frame on); {flow.method} of '{flow.explained}'"
    )
