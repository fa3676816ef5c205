"""Optical-flow frames as TSN/TSM store them, and flow clips for the Flow modality.

A video's flow folder holds ``flow_x_%05d.jpg`` and ``flow_y_%05d.jpg`` (1-based), one pair per
pair of consecutive frames: values clipped to ``[-BOUND, BOUND]`` pixels and mapped linearly to
0-255 (dense_flow's ``CAST``: ``round(255 * (v + BOUND) / (2 * BOUND))``).

A flow segment is ``new_length`` consecutive flow fields starting at a sampled index (TSN's
samplers over ``num_flow - new_length + 1`` starts); the clip pipeline
(:mod:`tsm_apps.data.pipeline`) reads them with :func:`read_flow` and turns them into float
``(T, 2 * new_length, S, S)`` with channels ``[x_1, y_1, x_2, y_2, ...]``, normalised by mean 0.5
and std 0.226 (official TSM).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence

import numpy as np

BOUND = 20.0
X_TEMPLATE, Y_TEMPLATE = "flow_x_{:05d}.jpg", "flow_y_{:05d}.jpg"
_X = re.compile(r"^flow_x_(\d{5})\.jpg$")


def flow_to_uint8(flow: np.ndarray, bound: float = BOUND) -> np.ndarray:
    """Float flow ``(..., 2)`` in pixels -> uint8: clip to ``±bound``, map to 0-255, round."""
    v = np.clip(np.asarray(flow, dtype=np.float64), -bound, bound)
    return np.rint(255.0 * (v + bound) / (2 * bound)).astype(np.uint8)


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
            raise ValueError(
                f"{folder}: flow_x/flow_y {i + 1} differ in shape "
                f"{pair[0].shape} vs {pair[1].shape}"
            )
        out[i] = np.stack(pair, axis=-1)
    return np.stack([out[int(i)] for i in indices])
