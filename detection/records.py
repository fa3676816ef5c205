"""The records of a frame's detections and of its ground truth, shared by inference, the VID
evaluation, the report and the app.

Boxes are ``(N, 4)`` float ``[x1, y1, x2, y2]`` in the frame's pixel *edge* coordinates (a box's
width is ``x2 - x1``; an ImageNet-VID XML box ``xmin..xmax`` is ``[xmin, xmax + 1]``, see
:func:`tsm_apps.data.vid_layout.edge_box`). ``label_ids (N,)`` are int64 class indices into the
producer's class list; ``labels`` the class names (``()`` when the producer has none). This
module imports numpy only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np


def as_boxes(a: object, what: str) -> np.ndarray:
    """``(N, 4)`` float boxes: a float array keeps its dtype, anything else becomes float64."""
    arr = np.asarray(a)
    if not np.issubdtype(arr.dtype, np.floating):
        arr = arr.astype(np.float64)
    if arr.size == 0:
        return np.zeros((0, 4), arr.dtype)
    if arr.ndim != 2 or arr.shape[1] != 4:
        raise ValueError(f"{what}: expected boxes of shape (N, 4), got {arr.shape}")
    return arr


def _as_vector(a: object, n: int, what: str, dtype: Optional[type] = None) -> np.ndarray:
    arr = np.asarray(a).reshape(-1)
    if dtype is not None:
        arr = arr.astype(dtype)
    elif not np.issubdtype(arr.dtype, np.floating):
        arr = arr.astype(np.float64)
    if arr.shape[0] != n:
        raise ValueError(f"{what}: expected {n} values (one per box), got shape {arr.shape}")
    return arr


def _as_names(names: object, n: int, what: str) -> tuple:
    names = tuple(str(x) for x in names)
    if names and len(names) != n:
        raise ValueError(
            f"{what}: expected {n} class names (one per box) or none, got {len(names)}"
        )
    return names


def _set(obj: object, **values: object) -> None:
    for k, v in values.items():
        object.__setattr__(obj, k, v)


@dataclass(frozen=True)
class FrameDetections:
    """Detections of one frame: ``boxes (K, 4)`` float pixel edges, ``scores (K,)`` float,
    ``label_ids (K,)`` int64, ``labels`` class names (``K`` of them, or ``()``), ``frame`` the
    frame's index in its video. Float arrays keep their dtype (inference gives float32)."""

    boxes: np.ndarray
    scores: np.ndarray
    label_ids: np.ndarray
    labels: tuple = ()
    frame: int = 0

    def __post_init__(self) -> None:
        boxes = as_boxes(self.boxes, "detections")
        n = len(boxes)
        _set(
            self,
            boxes=boxes,
            scores=_as_vector(self.scores, n, "detection scores"),
            label_ids=_as_vector(self.label_ids, n, "detection label ids", np.int64),
            labels=_as_names(self.labels, n, "detection labels"),
        )

    def keep(self, min_score: float) -> "FrameDetections":
        """The detections scoring at least ``min_score``, in the same order."""
        m = self.scores >= min_score
        names = tuple(lb for lb, k in zip(self.labels, m) if k)
        return FrameDetections(self.boxes[m], self.scores[m], self.label_ids[m], names, self.frame)

    def to_dict(self) -> dict:
        """JSON-ready: boxes rounded to 0.1 px, scores to 1e-4."""
        return {
            "frame": self.frame,
            "boxes": np.round(self.boxes, 1).tolist(),
            "scores": np.round(self.scores, 4).tolist(),
            "labels": list(self.labels),
            "label_ids": self.label_ids.tolist(),
        }


@dataclass(frozen=True)
class FrameTruth:
    """Ground truth of one frame: ``boxes (G, 4)`` float pixel edges, ``label_ids (G,)`` int64,
    ``labels`` class names (``G`` of them, or ``()``); ``motion_iou (G,)`` (FGFA motion IoU of
    each box, ``None`` when unknown: no motion split), ``ignore (G,)`` bool (ignored in every
    split, like VOC's difficult), ``corruption``: the synthetic corruption applied to the frame
    or ``None`` for a clean frame."""

    boxes: np.ndarray
    label_ids: np.ndarray
    labels: tuple = ()
    motion_iou: Optional[np.ndarray] = None
    ignore: Optional[np.ndarray] = None
    corruption: Optional[str] = None

    def __post_init__(self) -> None:
        boxes = as_boxes(self.boxes, "ground truth")
        n = len(boxes)
        motion = (
            None
            if self.motion_iou is None
            else _as_vector(self.motion_iou, n, "motion IoU", np.float64)
        )
        ignore = (
            np.zeros(n, bool)
            if self.ignore is None
            else _as_vector(self.ignore, n, "ignore flags", bool)
        )
        _set(
            self,
            boxes=boxes,
            motion_iou=motion,
            ignore=ignore,
            label_ids=_as_vector(self.label_ids, n, "ground-truth label ids", np.int64),
            labels=_as_names(self.labels, n, "ground-truth labels"),
        )

    def scaled(self, factor: float) -> "FrameTruth":
        """The same truth with its boxes in pixels ``factor`` times as large."""
        return FrameTruth(
            self.boxes * factor,
            self.label_ids,
            self.labels,
            self.motion_iou,
            self.ignore,
            self.corruption,
        )
