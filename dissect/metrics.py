"""Where a map looks, scored against per-frame actor boxes and per-frame ``active`` flags.

Layouts: maps ``(T, H, W)`` float, masks ``(T, H, W)`` bool, boxes ``(T, 4)`` as
``[x1, y1, x2, y2]`` in pixels of the map's ``(H, W)`` grid (rows of NaN: no box in that
frame), ``active`` ``(T,)`` bool. Pixel ``(i, j)`` covers ``[j, j+1) x [i, i+1)``; it belongs to a
box when its centre ``(j + 0.5, i + 0.5)`` lies inside the box (edges included).

* pointing game (Zhang et al. 2016): is the map's maximum on the actor? (first maximum on ties);
  strict (on the box) and with the game's standard tolerance (15 px at 224 px, scaled)
* IoU of a thresholded map with the actor box, per frame
* temporal localisation: per-frame mass (sum of the positive part of the map); its ROC AUC for
  telling active frames from inactive ones (0.5 = no temporal signal) and the ratio of mean mass
  in active to inactive frames
* baselines: a centre prior (a Gaussian in the middle of every frame) and a seeded random map
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

POINTING_TOLERANCE_224 = 15.0
"""The pointing game's tolerance (Zhang et al. 2016): 15 px on a 224-px input."""
CENTRE_SIGMA = 0.25
"""Standard deviation of the centre prior, as a fraction of the frame's height/width."""


def _check_maps(maps: np.ndarray, boxes: Optional[np.ndarray] = None) -> None:
    if maps.ndim != 3:
        raise ValueError(f"maps must be (T, H, W), got shape {maps.shape}")
    if boxes is not None and boxes.shape != (maps.shape[0], 4):
        raise ValueError(f"boxes must be (T={maps.shape[0]}, 4), got shape {boxes.shape}")


def scale_boxes(boxes: np.ndarray, src_hw: Sequence[int], dst_hw: Sequence[int]) -> np.ndarray:
    """Rescale ``(T, 4)`` boxes from a ``src_hw`` frame to a ``dst_hw`` map grid."""
    sy, sx = dst_hw[0] / src_hw[0], dst_hw[1] / src_hw[1]
    return np.asarray(boxes, np.float64) * np.array([sx, sy, sx, sy])


def box_masks(boxes: np.ndarray, hw: Sequence[int]) -> np.ndarray:
    """``(T, 4)`` boxes -> ``(T, H, W)`` bool masks of the pixels whose centre is in the box."""
    boxes = np.asarray(boxes, np.float64)
    ys = np.arange(hw[0]) + 0.5
    xs = np.arange(hw[1]) + 0.5
    with np.errstate(invalid="ignore"):
        iny = (ys[None, :] >= boxes[:, 1:2]) & (ys[None, :] <= boxes[:, 3:4])
        inx = (xs[None, :] >= boxes[:, 0:1]) & (xs[None, :] <= boxes[:, 2:3])
    return iny[:, :, None] & inx[:, None, :]


def has_box(boxes: np.ndarray) -> np.ndarray:
    """``(T,)`` True where the frame has a box (no NaN in its row)."""
    return ~np.isnan(np.asarray(boxes, np.float64)).any(axis=1)


def pointing_hits(maps: np.ndarray, boxes: np.ndarray, tolerance: float = 0.0) -> np.ndarray:
    """``(T,)`` bool: the first maximum of each frame lies within ``tolerance`` px of its box.

    Frames without a box are False; combine with :func:`has_box` to leave them out.
    """
    maps, boxes = np.asarray(maps), np.asarray(boxes, np.float64)
    _check_maps(maps, boxes)
    flat = maps.reshape(maps.shape[0], -1).argmax(axis=1)
    y, x = np.divmod(flat, maps.shape[2])
    cx, cy = x + 0.5, y + 0.5
    with np.errstate(invalid="ignore"):
        dx = np.maximum(np.maximum(boxes[:, 0] - cx, cx - boxes[:, 2]), 0)
        dy = np.maximum(np.maximum(boxes[:, 1] - cy, cy - boxes[:, 3]), 0)
        return (np.hypot(dx, dy) <= tolerance) & has_box(boxes)


def standard_tolerance(hw: Sequence[int]) -> float:
    """The pointing game's tolerance on an ``(H, W)`` map grid: 15 px per 224 px of the shorter
    side (7.5 px at 112)."""
    return POINTING_TOLERANCE_224 * min(hw) / 224.0


def mask_box_iou(masks: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """``(T,)`` IoU of each frame's mask with its box mask (NaN for frames without a box)."""
    masks = np.asarray(masks, bool)
    _check_maps(masks, np.asarray(boxes))
    gt = box_masks(boxes, masks.shape[1:])
    inter = (masks & gt).sum(axis=(1, 2))
    union = (masks | gt).sum(axis=(1, 2))
    iou = np.where(union > 0, inter / np.maximum(union, 1), 0.0)
    return np.where(has_box(boxes), iou, np.nan)


def frame_mass(maps: np.ndarray) -> np.ndarray:
    """``(T,)`` sum over ``(H, W)`` of the positive part of each frame's map."""
    maps = np.asarray(maps, np.float64)
    _check_maps(maps)
    return np.clip(maps, 0, None).sum(axis=(1, 2))


def temporal_auc(mass: np.ndarray, active: np.ndarray) -> Optional[float]:
    """P(mass of a random active frame > that of a random inactive one), ties count 1/2.

    ``None`` when the clip has no active or no inactive frame.
    """
    mass, active = np.asarray(mass, np.float64), np.asarray(active, bool)
    if mass.shape != active.shape:
        raise ValueError(f"mass {mass.shape} and active {active.shape} must have the same shape")
    pos, neg = mass[active], mass[~active]
    if pos.size == 0 or neg.size == 0:
        return None
    diff = pos[:, None] - neg[None, :]
    return float(((diff > 0).sum() + 0.5 * (diff == 0).sum()) / diff.size)


def mass_ratio(mass: np.ndarray, active: np.ndarray) -> Optional[float]:
    """Mean mass in active frames / mean mass in inactive frames (``None`` when undefined)."""
    mass, active = np.asarray(mass, np.float64), np.asarray(active, bool)
    if not active.any() or active.all():
        return None
    inactive = mass[~active].mean()
    return float(mass[active].mean() / inactive) if inactive > 0 else None


def centre_prior(shape: Sequence[int], sigma: float = CENTRE_SIGMA) -> np.ndarray:
    """``(T, H, W)`` Gaussian centred in every frame (std ``sigma`` x height / width)."""
    t, h, w = shape
    y = (np.arange(h) + 0.5 - h / 2) / (sigma * h)
    x = (np.arange(w) + 0.5 - w / 2) / (sigma * w)
    g = np.exp(-0.5 * (y[:, None] ** 2 + x[None, :] ** 2))
    return np.broadcast_to(g, (t, h, w)).astype(np.float32)


def random_map(shape: Sequence[int], seed: int) -> np.ndarray:
    """``(T, H, W)`` seeded uniform noise in ``[0, 1)``."""
    return np.random.default_rng(seed).random(tuple(shape), dtype=np.float32)


def clip_scores(
    maps: np.ndarray, boxes: np.ndarray, active: Optional[np.ndarray], masks: dict
) -> dict:
    """Per-frame scores of one clip's ``(T, H, W)`` maps, as JSON-ready lists.

    ``masks``: ``{threshold_name: (T, H, W) bool}``; gives ``iou_<name>`` entries.
    Keys: ``pointing`` (bool or None per frame: None where no box), ``mass``, ``iou_*``
    (None where no box), ``active``, ``temporal_auc``, ``mass_ratio`` (None where undefined).
    """
    boxes = np.asarray(boxes, np.float64)
    present = has_box(boxes)
    hits = pointing_hits(maps, boxes)
    mass = frame_mass(maps)
    out = {
        "pointing": [bool(h) if p else None for h, p in zip(hits, present)],
        "mass": [float(m) for m in mass],
    }
    for name, mask in masks.items():
        iou = mask_box_iou(mask, boxes)
        out[f"iou_{name}"] = [None if np.isnan(v) else float(v) for v in iou]
    act = None if active is None else np.asarray(active, bool)
    out["active"] = None if act is None else [bool(a) for a in act]
    out["temporal_auc"] = None if act is None else temporal_auc(mass, act)
    out["mass_ratio"] = None if act is None else mass_ratio(mass, act)
    return out


def mean_defined(values: Sequence) -> Optional[float]:
    """Mean of the non-None entries (``None`` when there are none)."""
    vals = [float(v) for v in values if v is not None]
    return float(np.mean(vals)) if vals else None


def summarise(clips: Sequence[dict]) -> dict:
    """Aggregate :func:`clip_scores` records: frame-pooled pointing and IoU (all frames with a
    box, and ``pointing_active``: frames where the action happens; ``pointing_tol``: with the
    standard tolerance, where the records carry it), clip-mean AUC and ratio."""
    if not clips:
        return {}
    act = [p for c in clips if c.get("active") for p, a in zip(c["pointing"], c["active"]) if a]
    out = {
        "clips": len(clips),
        "pointing": mean_defined([p for c in clips for p in c["pointing"]]),
        "pointing_active": mean_defined(act),
        "pointing_tol": mean_defined([p for c in clips for p in c.get("pointing_tol", [])]),
        "pointing_frames": sum(p is not None for c in clips for p in c["pointing"]),
        "temporal_auc": mean_defined([c["temporal_auc"] for c in clips]),
        "mass_ratio": mean_defined([c["mass_ratio"] for c in clips]),
    }
    for key in sorted(k for k in clips[0] if k.startswith("iou_")):
        out[key] = mean_defined([v for c in clips for v in c.get(key, [])])
    return out
