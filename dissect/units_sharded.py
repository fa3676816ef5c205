"""Unit dissection over clips split between processes, equal to the single-process result.

Each process holds the activations ``(M_r, C, h, w)`` and masks ``(M_r, H, W)`` of its clips.
The top-quantile level of unit ``k`` (``numpy.quantile`` with linear interpolation over all
``n`` values) needs only two order statistics; the ``n - lo`` largest values hold both, so each
process sends its top ``n - lo`` values per unit, and every process rebuilds the two statistics
and calls ``numpy.quantile`` on an array with the same ``n`` and the same values at those two
positions (bit-identical to the quantile of all values). Intersection and union pixel counts
are then summed over processes (integers: exact).
"""

from __future__ import annotations

from typing import Callable, List, Optional

import numpy as np

from .units import ND_MIN_IOU, ND_QUANTILE, ious_from_counts, layer_record, unit_counts

Gather = Callable[[object], List[object]]
Reduce = Callable[[np.ndarray], np.ndarray]


def _positions(n: int, quantile: float) -> tuple:
    """0-based ascending positions ``(lo, hi)`` numpy's linear quantile interpolates between."""
    virtual = (n - 1) * (1 - quantile)
    lo = int(np.floor(virtual))
    return lo, min(lo + 1, n - 1)


def _top_values(acts: Optional[np.ndarray], m: int) -> Optional[np.ndarray]:
    """Per unit the ``m`` largest values ``(C, <= m)`` (any order), or None without clips."""
    if acts is None:
        return None
    per_unit = acts.transpose(1, 0, 2, 3).reshape(acts.shape[1], -1)
    m = min(m, per_unit.shape[1])
    return -np.partition(-per_unit, m - 1, axis=1)[:, :m]


def _threshold(values: np.ndarray, n: int, lo: int, hi: int, quantile: float) -> float:
    """``numpy.quantile`` of ``n`` values whose ``n - lo`` largest are ``values``."""
    desc = np.sort(values)[::-1]
    v_lo, v_hi = desc[n - 1 - lo], desc[n - 1 - hi]
    stand_in = np.empty(n, values.dtype)
    stand_in[: lo + 1] = v_lo
    stand_in[lo + 1 :] = v_hi
    return np.quantile(stand_in, 1 - quantile)


def dissect_layer_sharded(
    acts: Optional[np.ndarray],
    masks: Optional[np.ndarray],
    gather: Gather,
    reduce: Reduce,
    quantile: float = ND_QUANTILE,
    min_iou: float = ND_MIN_IOU,
) -> dict:
    """:func:`dissect.units.dissect_layer` over every process's ``(acts, masks)`` (None for a
    process without clips). ``gather`` all-gathers a picklable object, ``reduce`` sums a float64
    or int64 array over processes."""
    if not 0 < quantile < 1:
        raise ValueError(f"quantile must be in (0, 1), got {quantile}")
    if acts is not None:
        acts = np.asarray(acts, np.float32)
        if acts.ndim != 4:
            raise ValueError(f"activations must be (M, C, h, w), got shape {acts.shape}")
    shapes = [s for s in gather(None if acts is None else acts.shape) if s is not None]
    if not shapes:
        raise ValueError("unit dissection needs at least one clip")
    c = shapes[0][1]
    n = int(sum(s[0] * s[2] * s[3] for s in shapes))
    lo, hi = _positions(n, quantile)
    tops = [t for t in gather(_top_values(acts, n - lo)) if t is not None]
    merged = np.concatenate(tops, axis=1)
    thr = np.array([_threshold(merged[k], n, lo, hi, quantile) for k in range(c)])
    if acts is None:
        inter, union = np.zeros(c), np.zeros(c)
    else:
        inter, union = unit_counts(acts, masks, thr)
    iou = ious_from_counts(reduce(inter), reduce(union))
    return layer_record(iou, thr, quantile, min_iou)
