"""The flow stream's maps on the segments of an RGB clip (two-stream dissection).

An RGB clip samples frames ``i_0 < ... < i_{T-1}`` of a video (the checkpoint's test protocol,
:func:`dissect.clips.clip_frames`). ``tsm flow extract`` writes flow field ``k`` (0-based,
files ``flow_x_{k+1:05d}.jpg`` / ``flow_y_{k+1:05d}.jpg``) as the motion from frame ``k`` to
``k + 1``, so the flow stack of segment ``t`` starts at that segment's RGB frame: fields
``i_t, i_t + 1, ..., i_t + L - 1`` (``L = new_length``, :func:`flow_stack_indices`); an index
past the video's last field repeats the last one (:func:`tsm_apps.data.pipeline.flow_stacks`).

Tensor layouts: stack indices ``(T, L)`` int; the fields read, uint8 ``(T, L, H, W, 2)``; the
flow input, float ``(T, 2L, S, S)`` with channels ``[x_1, y_1, ..., x_L, y_L]``
(:mod:`tsm_apps.models.modality`), normalised with mean 0.5 / std 0.226, resized and cropped by
the clip pipeline exactly like the RGB clip (:func:`dissect.clips.load_clip`), so the flow maps
``(T, S, S)`` lie on the RGB clip's pixels. The exact CAM is the RGB one
(:func:`dissect.cam.compute_cam`) on ``(1, T, 2L, S, S)``: class ``k``'s row of ``fc.weight``
dotted with the flow model's last conv features ``(1, T', C, h, w)``, upsampled.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional, Sequence

import numpy as np
from torch import Tensor, nn

from tsm_apps.data.flow import X_TEMPLATE, count_flow, flow_subfolder, read_flow
from tsm_apps.data.pipeline import flow_stacks, views_from_frames
from tsm_apps.data.protocol import TestProtocol

from .cam import ClassIndex, ClipMaps
from .gradcam import DEFAULT_WEIGHTING
from .methods import compute_clip_maps


@dataclass
class FlowClip:
    """Flow stacks on an RGB clip's segments: the video's flow ``folder``, the flow fields read
    ``indices (T, L)`` (0-based) and the network input ``input (T, 2L, S, S)``."""

    folder: Path
    indices: np.ndarray
    input: Tensor


def flow_new_length(fields: Mapping, path: str) -> int:
    """``new_length`` of a flow recognizer from its config fields (``in_channels = 2 L``);
    ValueError naming ``path`` when the checkpoint is not a flow model."""
    c = int(fields.get("in_channels", 3))
    if c % 2:
        raise ValueError(
            f"{path} is not a flow model: it takes {c} input channels per segment, "
            "expected 2 * new_length (10 for new_length 5: tsm train --modality flow)"
        )
    return c // 2


def flow_stack_indices(rgb_indices: Sequence[int], new_length: int, num_flow: int) -> np.ndarray:
    """``(T, L)`` flow fields (0-based) of the segments whose RGB frames are ``rgb_indices``
    ``(T,)``: row ``t`` is ``i_t .. i_t + L - 1``, clamped to the last field ``num_flow - 1``."""
    if num_flow < 1 or new_length < 1:
        raise ValueError(f"need num_flow >= 1 and new_length >= 1, got {num_flow}, {new_length}")
    return flow_stacks(np.asarray(rgb_indices, np.int64).reshape(-1), new_length, num_flow)


def video_flow_folder(flow_data: str | Path, name: str, is_file: bool) -> Path:
    """A video's flow folder: ``flow_data`` itself when it holds ``flow_x_00001.jpg`` (one
    video's folder), else where ``tsm flow extract ... --out flow_data`` put that video."""
    root = Path(flow_data)
    if (root / X_TEMPLATE.format(1)).is_file():
        return root
    return root / flow_subfolder(name, is_file)


def check_flow_folder(folder: str | Path, num_frames: int, video: str) -> int:
    """The number of flow fields in ``folder``, the flow of ``video`` (``num_frames`` frames);
    raises naming both when the folder is missing or holds fewer than ``num_frames - 1``
    fields (one per pair of consecutive frames)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(
            f"flow folder not found for {video}: expected {folder} "
            "(tsm flow extract DATA --out FLOW_DATA)"
        )
    n = count_flow(folder)
    need = max(num_frames - 1, 1)
    if n < need:
        raise ValueError(
            f"{folder}: {n} flow fields, but {video} has {num_frames} frames: "
            f"expected {need} (one per pair of consecutive frames; run tsm flow "
            "extract on the same videos)"
        )
    return n


def load_flow_clip(
    folder: str | Path,
    rgb_indices: Sequence[int],
    new_length: int,
    protocol: TestProtocol,
    num_frames: Optional[int] = None,
    video: str = "the video",
) -> FlowClip:
    """The flow stacks of the segments whose RGB frames are ``rgb_indices``, through the clip
    pipeline with the RGB clip's ``protocol`` (same resize and view, so the maps share the RGB
    clip's pixels). With ``num_frames`` the folder is checked against the video's length."""
    folder = Path(folder)
    n = (
        check_flow_folder(folder, num_frames, video)
        if num_frames is not None
        else count_flow(folder)
    )
    idx = flow_stack_indices(rgb_indices, new_length, n)
    starts = np.asarray(rgb_indices, np.int64).reshape(1, -1)
    views = views_from_frames(
        lambda i: read_flow(folder, i), starts, protocol.with_options(crops=1), "flow", idx[None]
    )
    return FlowClip(folder, idx, views.input[0])


def compute_flow_maps(
    model: nn.Module,
    clip: FlowClip,
    method: str = "cam",
    class_idx: ClassIndex = None,
    weighting: str = DEFAULT_WEIGHTING,
) -> ClipMaps:
    """``method``'s maps of the flow recognizer ``model`` (eval mode) on ``clip``: maps
    ``(1, T, S, S)``, logits ``(1, K)`` (``model.num_segments`` is set to ``T``)."""
    c = model.config.in_channels
    if clip.input.dim() != 4 or clip.input.shape[1] != c:
        raise ValueError(
            f"the flow model takes {c} channels per segment (new_length {c // 2}), "
            f"the flow clip of {clip.folder} is {tuple(clip.input.shape)} "
            "(T, 2L, S, S)"
        )
    model.num_segments = clip.input.shape[0]
    device = next(model.parameters()).device
    return compute_clip_maps(model, clip.input[None].to(device), method, class_idx, weighting)


def flow_clip_maps(
    model: nn.Module,
    folder: str | Path,
    rgb_indices: Sequence[int],
    protocol: TestProtocol,
    method: str = "cam",
    class_idx: ClassIndex = None,
    num_frames: Optional[int] = None,
) -> tuple:
    """``(FlowClip, ClipMaps)``: the flow model's maps on the flow stacks of an RGB clip's
    segments (``rgb_indices (T,)``); ``new_length`` is the model's ``in_channels // 2``."""
    new_length = flow_new_length(vars(model.config), type(model).__name__)
    clip = load_flow_clip(folder, rgb_indices, new_length, protocol, num_frames)
    return clip, compute_flow_maps(model, clip, method, class_idx)
