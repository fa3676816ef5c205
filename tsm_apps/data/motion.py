"""FGFA's motion IoU: how fast a ground-truth object moves, and the slow/medium/fast split.

A box's *motion IoU* is the mean IoU between the box and the boxes of the same track (same
``trackid``) in the nearby frames ``t-10 .. t+10`` (FGFA, Zhu et al. 2017, section 5). Frames in
which the track has no box are left out of the mean (so the mean is over fewer frames at the
ends of a snippet or of a track), and so is frame ``t`` itself (its IoU is always 1). A box
without any neighbour (no box of its track within ``t-10 .. t+10``, e.g. a track seen in one
frame only) gets motion IoU 0.0 and so falls in ``fast``, as FGFA's evaluation reads an empty
entry of ``imagenet_vid_groundtruth_motion_iou.mat`` (``m[i][0][j][0] if len(m[i][0][j]) != 0
else 0``).

FGFA's published file (``lib/dataset/imagenet_vid_groundtruth_motion_iou.mat`` of its repository
at f01243e, read here with scipy): a MATLAB variable ``motion_iou``, a ``(176126, 1)`` cell
array, one cell per val frame in ``VID_val_videos.txt`` order, each an ``(objects, 1)`` vector in
the frame XML's object order: 172,080 cells are such vectors (739 of them stored as ``uint8``
ones), 4,046 are empty ``(1, 0)`` cells (which FGFA's expression reads as one value 0); no value
is 0. :func:`read_motion_iou_mat` reads that layout (an empty cell as no value, a cell of cells
with empty entries as 0), :func:`write_motion_iou_mat` writes it.

Which one the evaluation uses: ``VIDMetric`` computes the motion IoU from the val XML by default
(:func:`snippet_motion_iou`) and reads FGFA's file only when given ``motion_iou_file``. The file
exists for the ILSVRC2015 val split in ``VID_val_videos.txt`` order only, so a subset, another
list order, a test split or a synthetic set has none; the computed values equal the file's
layout on the same snippets (``tests/test_detection/test_vid_metric.py``, a hand-computed
``.mat`` for a tiny tree in the real layout).

Classes (FGFA's motion ranges, ``lib/dataset/imagenet_vid.py:409`` at f01243e): ``slow`` if
motion IoU > 0.9, ``medium`` if 0.7 <= IoU <= 0.9, ``fast`` if IoU < 0.7. Both boundaries
belong to ``medium``: FGFA's evaluation code keeps a GT box in a motion range when
``lo <= iou <= hi`` with ranges [0, 0.7], [0.7, 0.9], [0.9, 1]; we give the shared boundary
values to the middle class so that each box has exactly one class.

Boxes are float ``[x1, y1, x2, y2]`` in pixel *edge* coordinates (width ``x2 - x1``). The XML
boxes of ImageNet-VID are inclusive integers; :func:`snippet_motion_iou` converts them to
``[xmin, ymin, xmax + 1, ymax + 1]``, which gives the devkit's ``+ 1`` widths. Pure numpy.
"""

from __future__ import annotations

import os
from typing import Mapping, Optional, Sequence

import numpy as np

from .vid_layout import edge_box

WINDOW = 10  # frames on each side of t
SLOW_ABOVE = 0.9  # motion IoU > 0.9: slow
FAST_BELOW = 0.7  # motion IoU < 0.7: fast; in between (both ends included): medium
MOTION_CLASSES = ("slow", "medium", "fast")


def box_iou(a: object, b: object) -> np.ndarray:
    """IoU matrix ``(N, M)`` of edge-coordinate boxes ``a (N, 4)`` and ``b (M, 4)``.

    Empty boxes (zero area) have IoU 0 with everything, themselves included."""
    a = _boxes(a, "box_iou: a")
    b = _boxes(b, "box_iou: b")
    iw = np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0])
    ih = np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1])
    inter = np.clip(iw, 0, None) * np.clip(ih, 0, None)
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    union = area_a[:, None] + area_b[None, :] - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)


def motion_iou(
    track_boxes: Sequence[Optional[Sequence[float]]], window: int = WINDOW
) -> np.ndarray:
    """Motion IoU per frame of one track.

    ``track_boxes``: one entry per frame of the snippet, an edge-coordinate box
    ``[x1, y1, x2, y2]`` or ``None`` where the track is absent. Returns float ``(F,)``: the
    mean IoU with the track's boxes in frames ``t-window..t+window`` except ``t`` (0.0 without
    neighbours, as FGFA), NaN where the track is absent."""
    if window < 1:
        raise ValueError(f"window must be >= 1 frame, got {window}")
    present = np.array([b is not None for b in track_boxes], bool)
    boxes = np.zeros((len(track_boxes), 4))
    for t, b in enumerate(track_boxes):
        if b is not None:
            row = np.asarray(b, np.float64).reshape(-1)
            if row.shape != (4,):
                raise ValueError(f"motion_iou: frame {t} box must have 4 values, got {row.shape}")
            boxes[t] = row
    iou = box_iou(boxes, boxes)
    out = np.full(len(track_boxes), np.nan)
    for t in np.flatnonzero(present):
        lo, hi = max(0, t - window), min(len(track_boxes), t + window + 1)
        near = [s for s in range(lo, hi) if s != t and present[s]]
        out[t] = float(np.mean(iou[t, near])) if near else 0.0
    return out


def motion_class(iou: float) -> str:
    """``'slow'`` (> 0.9), ``'medium'`` (0.7 <= iou <= 0.9) or ``'fast'`` (< 0.7)."""
    iou = float(iou)
    if not np.isfinite(iou):
        raise ValueError(f"motion_class: motion IoU must be a finite number, got {iou}")
    if iou > SLOW_ABOVE:
        return "slow"
    if iou < FAST_BELOW:
        return "fast"
    return "medium"


def snippet_motion_iou(frames: Sequence, window: int = WINDOW) -> list:
    """Motion IoU of every object of a snippet, from its frames in order.

    ``frames``: :class:`tsm_apps.data.vid_layout.VIDFrame` objects (or anything with an
    ``objects`` list of items with ``trackid`` and inclusive ``box``). Returns one list per frame
    holding one float per object, in the frame's object order."""
    tracks: dict = {}
    for t, frame in enumerate(frames):
        for obj in frame.objects:
            boxes = tracks.setdefault(obj.trackid, [None] * len(frames))
            if boxes[t] is not None:
                raise ValueError(
                    f"frame {t} ({getattr(frame, 'filename', '?')}): track "
                    f"{obj.trackid} appears twice"
                )
            boxes[t] = edge_box(obj.box)
    per_track = {tid: motion_iou(boxes, window) for tid, boxes in tracks.items()}
    return [
        [float(per_track[o.trackid][t]) for o in frame.objects] for t, frame in enumerate(frames)
    ]


def count_motion_classes(values: object) -> Mapping[str, int]:
    """``{'slow': n, 'medium': n, 'fast': n}`` over motion IoU values (any nesting of lists)."""
    flat = np.asarray([v for v in _flatten(values)], np.float64)
    counts = {c: 0 for c in MOTION_CLASSES}
    for v in flat:
        counts[motion_class(v)] += 1
    return counts


def read_motion_iou_mat(path: str | os.PathLike) -> list:
    """FGFA's motion IoU file: one float64 ``(objects,)`` array per val frame (global order).

    Reads the MATLAB variable ``motion_iou``, a cell array with one cell per frame; a cell holds
    one value per object (a numeric vector, or a cell of scalars); an empty entry (an object
    without neighbours) reads as 0, as FGFA's ``vid_eval_motion`` does. ValueError naming the
    file when the variable is missing or not a cell array."""
    import scipy.io

    try:
        data = scipy.io.loadmat(str(path))
    except (OSError, ValueError, TypeError) as e:
        raise ValueError(f"{path}: unreadable MATLAB file ({e})") from None
    cells = data.get("motion_iou")
    if cells is None or cells.dtype != object:
        raise ValueError(
            f"{path}: expected a cell array variable 'motion_iou' (one cell per val "
            f"frame), got variables {sorted(k for k in data if not k.startswith('_'))}"
        )
    return [
        np.array(
            [_scalar(v) for v in np.asarray(c, object).reshape(-1)]
            if c.dtype == object
            else np.asarray(c, np.float64).reshape(-1),
            np.float64,
        )
        for c in cells.reshape(-1)
    ]


def _scalar(v: object) -> float:
    arr = np.asarray(v, np.float64).reshape(-1)
    return float(arr[0]) if arr.size else 0.0


def write_motion_iou_mat(path: str | os.PathLike, per_frame: Sequence[Sequence[float]]) -> None:
    """Write ``per_frame`` motion IoU (one list per val frame) as FGFA's ``.mat`` layout."""
    import scipy.io

    cells = np.empty((len(per_frame), 1), dtype=object)
    for i, values in enumerate(per_frame):
        v = np.asarray(values, np.float64)
        cells[i, 0] = v.reshape(-1, 1) if v.size else np.zeros((1, 0))  # empty: as FGFA's
    scipy.io.savemat(str(path), {"motion_iou": cells})


def _flatten(values: object):
    if isinstance(values, (list, tuple, np.ndarray)):
        for v in values:
            yield from _flatten(v)
    else:
        yield values


def _boxes(a: object, what: str) -> np.ndarray:
    arr = np.asarray(a, np.float64)
    if arr.size == 0:
        return np.zeros((0, 4))
    if arr.ndim == 1 and arr.shape[0] == 4:
        arr = arr[None]
    if arr.ndim != 2 or arr.shape[1] != 4:
        raise ValueError(f"{what}: expected boxes of shape (N, 4), got {arr.shape}")
    return arr
