"""The clip pipeline at test time: a video and a :class:`~tsm_apps.data.protocol.TestProtocol`
in, the network input and where every view lies out. ``tsm test``, dissection, the app and the
Python API all call :func:`load_views`, so one checkpoint gives one answer everywhere.

Steps: frame indices (:func:`clip_indices`: the protocol's sampler), decoding only the frames
needed (video file, frame folder, flow folder or frames already in memory), shorter side to
``scale_size`` (the protocol's resize), the views (crops, mirrored views), ``/255``,
normalisation (:mod:`tsm_apps.data.normalization`).

Layouts: ``input (V, T, C, S, S)`` float, ``V = clips * views_per_clip`` with view ``v`` taken
from clip ``v // views_per_clip`` and crop ``v % views_per_clip``; ``C`` = 3 (RGB) or ``2L``
(flow, channels ``[x_1, y_1, ..., x_L, y_L]``). ``indices (clips, T)`` 0-based frames (flow: the
first field of each segment's stack, ``stacks (clips, T, L)``). ``frames (V, T, S, S, 3)`` uint8:
the pixels each RGB view shows. ``boxes (crops, 4)``: ``x0, y0, x1, y1`` of each crop in the
original frame's pixels (``frame_size = (H, W)``); :meth:`ClipViews.to_input` and
:meth:`ClipViews.box_in` map boxes between the frame and a crop's input.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np
from torch import Tensor

from .decoder import check_frame
from .normalization import modality_stats, normalize
from .protocol import TestProtocol
from .record import VideoSource
from .sampling import dense_sample_test, sample_multi_clip, sample_test, sample_twice
from .transforms import GroupScale, GroupViews, ToTensor

__all__ = [
    "ClipViews",
    "clip_indices",
    "flow_stacks",
    "frame_input",
    "load_views",
    "views_from_frames",
]


@dataclass
class ClipViews:
    """A video's test input under a protocol (layouts in the module docstring)."""

    input: Tensor
    indices: np.ndarray
    frames: Optional[np.ndarray]
    boxes: np.ndarray
    flips: list
    frame_size: tuple
    protocol: TestProtocol
    stacks: Optional[np.ndarray] = None

    @property
    def num_views(self) -> int:
        return int(self.input.shape[0])

    def to_input(self, boxes: np.ndarray, crop: int = 0) -> np.ndarray:
        """Boxes ``(..., 4)`` ``x0, y0, x1, y1`` in the original frame's pixels -> pixels of
        crop ``crop``'s input ``(S_h, S_w)`` (a box outside the view gets coordinates outside
        ``[0, S]``)."""
        x0, y0, x1, y1 = self.boxes[crop]
        h, w = self.input.shape[-2:]
        sx, sy = w / (x1 - x0), h / (y1 - y0)
        return (np.asarray(boxes) - np.array([x0, y0, x0, y0])) * np.array([sx, sy, sx, sy])

    def box_in(self, size: tuple, crop: int = 0) -> tuple:
        """Crop ``crop``'s box ``(x0, y0, x1, y1)`` in the frame shown at ``size = (h, w)``
        (e.g. the frames an app holds at its working resolution)."""
        h, w = self.frame_size
        sy, sx = size[0] / h, size[1] / w
        x0, y0, x1, y1 = self.boxes[crop]
        return (x0 * sx, y0 * sy, x1 * sx, y1 * sy)


def clip_indices(
    protocol: TestProtocol, num_frames: int, num_segments: int, new_length: int = 1
) -> np.ndarray:
    """``(clips, T)`` 0-based start frames of every clip's segments under ``protocol``.

    ``tsn``: segment centres ``int(tick / 2 + tick * i)`` with ``tick = (F - L + 1) / T``
    (official ``_get_test_indices``; ``L = new_length``, 1 for RGB); ``multi``: clips spread
    in the segments; ``twice``: centres then segment starts; ``dense``: ``clips`` starts of a
    ``dense_window`` window, frame ``(i * window // T + start) % F``.
    """
    positions = max(int(num_frames) - new_length + 1, 1)
    t, k = num_segments, protocol.clips
    if protocol.sampling == "dense":
        idx = dense_sample_test(int(num_frames), t, k, protocol.dense_window)
    elif protocol.sampling == "twice":
        idx = sample_twice(positions, t)
    elif protocol.sampling == "multi" or k > 1:
        idx = sample_multi_clip(positions, t, k)
    else:
        idx = sample_test(positions, t)
    return idx.reshape(-1, t)


def flow_stacks(indices: np.ndarray, new_length: int, num_fields: int) -> np.ndarray:
    """``(..., L)`` flow fields read for segments starting at ``indices``, clamped to the last
    field (a short video repeats it)."""
    steps = np.arange(new_length, dtype=np.int64)
    return np.minimum(np.asarray(indices, np.int64)[..., None] + steps, num_fields - 1)


def _views(frames: np.ndarray, protocol: TestProtocol) -> tuple:
    """``(views uint8 (K, N, h, w, C), offsets [(y, x, flip)], scaled (h, w))``."""
    H, W = frames.shape[1:3]
    scale = GroupScale(protocol.scale_size, protocol.resize, protocol.size_rounding)
    scaled = scale(frames)
    sh, sw = scaled.shape[1:3]
    if protocol.view == "frame":
        return scaled[None], [(0, 0, False)], (sh, sw)
    views = GroupViews(protocol.crop_size, protocol.crops, protocol.style)
    offsets = views.offsets(sh, sw)
    out = views(scaled).reshape(len(offsets), len(frames), *views.size, frames.shape[-1])
    return out, offsets, (sh, sw)


def _boxes(offsets: list, size: tuple, scaled: tuple, original: tuple) -> np.ndarray:
    (h, w), (sh, sw), (H, W) = size, scaled, original
    fy, fx = H / sh, W / sw
    return np.array([[x * fx, y * fy, (x + w) * fx, (y + h) * fy] for y, x, _ in offsets])


def views_from_frames(
    read: Callable[[np.ndarray], np.ndarray],
    indices: np.ndarray,
    protocol: TestProtocol,
    modality: str = "rgb",
    stacks: Optional[np.ndarray] = None,
) -> ClipViews:
    """The views of the clips ``indices (clips, T)``; ``read(flat indices) -> uint8
    (n, H, W, C)`` decodes frames (RGB) or flow fields (``stacks (clips, T, L)`` given)."""
    clips, t = indices.shape
    flat = (stacks if stacks is not None else indices).reshape(-1)
    raw = read(flat)
    length = stacks.shape[-1] if stacks is not None else 1
    views, offsets, scaled = _views(raw, protocol)
    k, _, h, w, c = views.shape
    x = ToTensor()(views.reshape(-1, h, w, c))  # (K*clips*T*L, C, h, w)
    x = normalize(x, *modality_stats(modality))
    x = x.reshape(k, clips, t, length * c, h, w).transpose(0, 1).reshape(-1, t, length * c, h, w)
    shown = None
    if modality == "rgb":
        shown = views.reshape(k, clips, t, h, w, c).transpose(1, 0, 2, 3, 4, 5)
        shown = np.ascontiguousarray(shown.reshape(-1, t, h, w, c))
    size = (h, w)
    return ClipViews(
        x.contiguous(),
        indices,
        shown,
        _boxes(offsets, size, scaled, raw.shape[1:3]),
        [f for _, _, f in offsets],
        tuple(raw.shape[1:3]),
        protocol,
        stacks,
    )


def load_views(
    source: Optional[VideoSource],
    protocol: TestProtocol,
    num_segments: int,
    modality: str = "rgb",
    new_length: int = 1,
    frames: Optional[np.ndarray] = None,
) -> ClipViews:
    """The test input of one video ``source``; ``frames`` uint8 ``(F, H, W, 3)`` already
    decoded are used instead of reading ``source.path`` (``source`` may then be None).
    Flow: ``source.path`` is the video's flow folder and ``num_frames`` its field count."""
    num = int(len(frames) if frames is not None else source.num_frames)
    if modality == "flow":
        from .flow import read_flow

        idx = clip_indices(protocol, num, num_segments, new_length)
        return views_from_frames(
            lambda i: read_flow(source.path, i),
            idx,
            protocol,
            "flow",
            flow_stacks(idx, new_length, num),
        )
    idx = clip_indices(protocol, num, num_segments)
    if frames is not None:
        return views_from_frames(lambda i: np.ascontiguousarray(frames[i]), idx, protocol)
    from .video import read_video_frames

    return views_from_frames(
        lambda i: read_video_frames(source.path, i, source.frame_template, source.start_index),
        idx,
        protocol,
    )


def frame_input(frame: np.ndarray, protocol: TestProtocol) -> Tensor:
    """One uint8 ``(H, W, 3)`` RGB frame as the input ``(1, 3, S, S)`` of an online step: the
    first view ``protocol`` takes of it (its centre crop, or the whole frame with
    ``view='frame'``), resized and normalised as every clip is."""
    frame = check_frame(frame)
    proto = protocol.with_options(clips=1, crops=1, sampling="tsn")
    views = views_from_frames(lambda i: frame[None], np.zeros((1, 1), np.int64), proto)
    return views.input[0]
