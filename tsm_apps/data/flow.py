"""Optical-flow frames as TSN/TSM store them, and flow clips for the Flow modality.

A video's flow folder holds ``flow_x_%05d.jpg`` and ``flow_y_%05d.jpg`` (1-based), one pair per
pair of consecutive frames: values clipped to ``[-BOUND, BOUND]`` pixels and mapped linearly to
0-255 (dense_flow's ``CAST``: ``round(255 * (v + BOUND) / (2 * BOUND))``).

A flow segment is ``new_length`` consecutive flow fields starting at a sampled index (TSN's
``_sample_indices`` over ``num_flow - new_length + 1`` starts), read as uint8
``(T, new_length, H, W, 2)`` and turned into float ``(T, 2 * new_length, S, S)`` with channels
``[x_1, y_1, x_2, y_2, ...]`` normalised by mean 0.5 and std 0.226 (official TSM).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence

import numpy as np
import torch
from torch import Tensor
from torch.nn import functional as F

from ..models.modality import FLOW_MEAN, FLOW_STD

BOUND = 20.0
X_TEMPLATE, Y_TEMPLATE = "flow_x_{:05d}.jpg", "flow_y_{:05d}.jpg"
_X = re.compile(r"^flow_x_(\d{5})\.jpg$")


def flow_to_uint8(flow: np.ndarray, bound: float = BOUND) -> np.ndarray:
    """Float flow ``(..., 2)`` in pixels -> uint8: clip to ``±bound``, map to 0-255, round."""
    v = np.clip(np.asarray(flow, dtype=np.float64), -bound, bound)
    return np.rint(255.0 * (v + bound) / (2 * bound)).astype(np.uint8)


def uint8_to_flow(img: np.ndarray, bound: float = BOUND) -> np.ndarray:
    """The inverse map (to within one quantisation step ``2 * bound / 255``)."""
    return img.astype(np.float32) * (2 * bound / 255.0) - bound


def count_flow(folder: str | Path) -> int:
    """Number of flow fields in ``folder`` (``flow_x_00001.jpg`` .. ``flow_x_<n>.jpg``)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"flow folder not found: {folder}")
    n = sum(1 for p in folder.iterdir() if _X.match(p.name))
    if n == 0:
        raise ValueError(f"{folder}: no flow_x_%05d.jpg files")
    return n


def flow_subfolder(name: str, is_file: bool) -> Path:
    """Where ``tsm flow extract`` puts a video's flow, relative to its ``--out``: the video's name
    (its path relative to the input) without the file suffix; a name that is absolute or leaves
    the input (``..``) keeps only its last part."""
    rel = Path(name)
    if rel.is_absolute() or ".." in rel.parts:
        rel = Path(rel.name)
    return rel.with_suffix("") if is_file else rel


def read_flow(folder: str | Path, indices: Sequence[int]) -> np.ndarray:
    """Flow fields ``indices`` (0-based) of ``folder`` as uint8 ``(len(indices), H, W, 2)``."""
    import cv2
    folder = Path(folder)
    out = {}
    for i in sorted(set(int(i) for i in indices)):
        pair = []
        for tmpl in (X_TEMPLATE, Y_TEMPLATE):
            path = folder / tmpl.format(i + 1)
            img = cv2.imread(str(path), cv2.IMREAD_GRAYSCALE)
            if img is None:
                raise ValueError(f"{path}: missing or unreadable flow image (flow field {i})")
            pair.append(img)
        if pair[0].shape != pair[1].shape:
            raise ValueError(f"{folder}: flow_x/flow_y {i + 1} differ in shape "
                             f"{pair[0].shape} vs {pair[1].shape}")
        out[i] = np.stack(pair, axis=-1)
    return np.stack([out[int(i)] for i in indices])


def segment_starts(num_flow: int, t: int, new_length: int, offsets: Sequence[float] | None) -> list:
    """First flow index of each of ``t`` segments over the ``num_flow - new_length + 1`` starts.

    ``offsets`` (``t`` values in [0, 1)): training, a random start within each segment;
    ``None``: evaluation, the segment's middle. Videos too short repeat their last field.
    """
    starts = max(num_flow - new_length + 1, 1)
    seg = starts / t
    if offsets is None:
        return [min(int(seg * (i + 0.5)), starts - 1) for i in range(t)]
    return [min(int(seg * i + offsets[i] * seg), starts - 1) for i in range(t)]


def stack_indices(starts: Sequence[int], new_length: int, num_flow: int) -> list:
    """Flow indices ``[t][new_length]`` read for segments starting at ``starts`` (clamped)."""
    return [[min(s + j, num_flow - 1) for j in range(new_length)] for s in starts]


def to_flow_input(stacks: Tensor, size: int, box: tuple | None = None,
                  flip: bool = False) -> Tensor:
    """uint8 ``(T, L, H, W, 2)`` -> normalised float ``(T, 2L, size, size)``, ``[x1, y1, ...]``.

    ``box = (y, x, h, w)`` crops (else the centre square); ``flip`` mirrors and inverts x
    (TSN's ``GroupRandomHorizontalFlip(is_flow=True)``: ``x -> 255 - x``).
    """
    if stacks.dim() != 5 or stacks.shape[-1] != 2 or stacks.dtype != torch.uint8:
        raise ValueError(f"expected uint8 flow stacks (T, L, H, W, 2), got {stacks.dtype} "
                         f"{tuple(stacks.shape)}")
    t, length, h, w, _ = stacks.shape
    if box is None:
        side = min(h, w)
        box = ((h - side) // 2, (w - side) // 2, side, side)
    y, x, ch, cw = box
    v = stacks[:, :, y:y + ch, x:x + cw].permute(0, 1, 4, 2, 3).reshape(t, 2 * length, ch, cw)
    v = v.float()
    if flip:
        v = v.flip(-1)
        v[:, 0::2] = 255.0 - v[:, 0::2]
    v = v.div_(255)
    if (ch, cw) != (size, size):
        v = F.interpolate(v, size=(size, size), mode="bilinear", align_corners=False,
                          antialias=True)
    return (v - FLOW_MEAN) / FLOW_STD
