"""The flow stream of a dissection job: ``tsm dissect run ... --flow-checkpoint FLOW.pth
--flow-data DIR`` stores the flow model's maps beside the RGB model's.

Checked with the other inputs (each checkpoint opened once), before any frame is decoded
(:func:`check_flow_inputs`): the RGB checkpoint takes 3 channels, the flow checkpoint is a flow
model (``2 * new_length`` channels) with the RGB model's class count, and every video has its
flow folder under ``DIR`` (``tsm flow extract DATA --out DIR``) with one field per pair of
consecutive frames. Per clip (:func:`flow_outputs`), on the RGB clip's segments
(:mod:`dissect.flow_cam`), explaining ``--class-index`` or the flow model's own top-1::

    maps/<id>.npz             flow_maps (T, H, W) float32 at the RGB maps' resolution,
                              flow_lowres (T', h, w), flow_logits (K,), flow_indices (T, L)
    clips/<id>.json           "flow": folder, indices, pred, top-5, class explained
    overlays/<id>.flow.png    the flow maps over the RGB frames (per-clip scale)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np
import torch

from tsm_apps.data.protocol import TestProtocol
from tsm_apps.evaluation.recognition import Checkpoint
from tsm_apps.evaluation.scoring import fuse_views, top_k

from .clips import Clip
from .flow_cam import (
    check_flow_folder,
    compute_flow_maps,
    flow_new_length,
    load_flow_clip,
    video_flow_folder,
)
from .inputs import CheckedInputs, check_checkpoint


@dataclass
class FlowInputs:
    """The checked flow stream: its opened checkpoint (model on the job's device),
    ``new_length`` and each clip's flow folder."""

    checkpoint: Checkpoint
    new_length: int
    folders: Dict[str, Path]


@dataclass
class FlowStream:
    """The flow model (eval mode, on the job's device) and its checked inputs."""

    model: torch.nn.Module
    inputs: FlowInputs


def _check_checkpoints(
    flow_checkpoint: str, checked: CheckedInputs, rgb: str, device: Any
) -> tuple:
    """``(opened flow checkpoint, new_length)`` after checking it against the RGB one."""
    if checked.in_channels != 3:
        raise ValueError(
            f"--checkpoint {rgb} takes {checked.in_channels} input channels per "
            "segment: expected the RGB model (3) beside --flow-checkpoint"
        )
    ck = check_checkpoint(flow_checkpoint, device)
    new_length = flow_new_length({"in_channels": ck.model.config.in_channels}, flow_checkpoint)
    k = len(ck.names)
    if k != checked.num_classes:
        raise ValueError(
            f"--flow-checkpoint {flow_checkpoint} has {k} classes, --checkpoint "
            f"{rgb} has {checked.num_classes}: expected the same classes"
        )
    return ck, new_length


def check_flow_inputs(
    flow_checkpoint: str,
    flow_data: str,
    checked: CheckedInputs,
    rgb_checkpoint: str,
    device: Any = "cpu",
) -> FlowInputs:
    """Check the flow stream's inputs (see the module docstring), opening its checkpoint once
    on ``device``; errors name the file and what was expected. Videos already known to be
    unreadable are left to the job's skips."""
    ck, new_length = _check_checkpoints(flow_checkpoint, checked, rgb_checkpoint, device)
    root = Path(flow_data).resolve()
    if not root.is_dir():
        raise FileNotFoundError(
            f"--flow-data not found: {root} (expected the folder that "
            "tsm flow extract DATA --out DIR wrote)"
        )
    folders: Dict[str, Path] = {}
    for e in checked.entries:
        v = e.video
        if v.error is not None:
            continue
        folder = video_flow_folder(root, v.name or v.path.name, v.path.is_file())
        check_flow_folder(folder, v.num_frames, e.path)
        folders[e.id] = folder
    return FlowInputs(ck, new_length, folders)


def flow_outputs(
    stream: FlowStream,
    clip: Clip,
    protocol: TestProtocol,
    method: str,
    class_idx: Optional[int],
    weighting: str,
    names: List[str],
) -> tuple:
    """``(arrays, record)`` of the flow model's maps on ``clip``'s segments (module docstring),
    through the clip pipeline with the RGB clip's ``protocol``."""
    fclip = load_flow_clip(
        stream.inputs.folders[clip.entry.id], clip.indices, stream.inputs.new_length, protocol
    )
    if tuple(fclip.input.shape[-2:]) != tuple(clip.input.shape[-2:]):
        raise ValueError(
            f"{fclip.folder}: flow fields give {tuple(fclip.input.shape[-2:])} "
            f"inputs, the RGB frames {tuple(clip.input.shape[-2:])}: the flow "
            "fields must have the frames' size (tsm flow extract of the same videos)"
        )
    res = compute_flow_maps(stream.model, fclip, method, class_idx, weighting)
    arrays = {
        "flow_maps": res.maps[0].cpu().numpy().astype(np.float32),
        "flow_lowres": res.lowres[0].cpu().numpy().astype(np.float32),
        "flow_logits": res.logits[0].cpu().numpy(),
        "flow_indices": fclip.indices,
    }
    top5 = top_k(fuse_views(res.logits[:1].detach().cpu(), protocol.fusion), names)
    cls = int(res.classes[0])
    record = {
        "folder": str(fclip.folder),
        "indices": fclip.indices.tolist(),
        "pred": top5[0]["index"],
        "pred_name": top5[0]["name"],
        "top5": top5,
        "class": cls,
        "class_name": names[cls] if names else f"class {cls}",
    }
    return arrays, record
