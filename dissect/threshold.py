"""Map thresholds, named for what they are.

* :func:`dataset_keep_fraction_threshold` — the TSM paper's rule (section 8): one threshold for
  the whole evaluated set, chosen so that ``keep`` (20%) of all map pixels are kept.
  :func:`keep_fraction_thresholds` computes the same value exactly, streaming over the clips
  and across processes (two radix passes of histograms summed over ranks).
* :func:`fraction_of_max_mask` — the CAM paper's rule (Zhou et al. 2016): keep the pixels above
  ``fraction`` (20%) of the map's maximum, per frame (or per clip).

Maps are arrays whose last two axes are ``(H, W)``; masks are boolean arrays of the same shape.
"""

from __future__ import annotations

from typing import Callable, Dict, Iterable, Optional, Sequence

import numpy as np

DEFAULT_KEEP = 0.2
DEFAULT_MAX_FRACTION = 0.2
MAX_THRESHOLD_SAMPLES = 20_000_000
THRESHOLD_KINDS = ("dataset", "max20")


def dataset_keep_fraction_threshold(
    maps: Iterable[np.ndarray],
    keep: float = DEFAULT_KEEP,
    max_samples: int = MAX_THRESHOLD_SAMPLES,
    seed: int = 0,
) -> float:
    """Threshold ``t`` such that ``keep`` of all pixels of ``maps`` satisfy ``value >= t``.

    ``t`` is the ``k``-th largest value over every pixel of every map, ``k = ceil(keep * n)``,
    so exactly ``k`` pixels are kept when values are distinct. When there are more than
    ``max_samples`` pixels a seeded uniform subsample of that size is used.
    """
    if not 0 < keep <= 1:
        raise ValueError(f"keep must be in (0, 1], got {keep}")
    if isinstance(maps, np.ndarray):
        maps = [maps]
    parts = [np.asarray(m, dtype=np.float32).ravel() for m in maps]
    values = np.concatenate(parts) if parts else np.empty(0)
    if values.size == 0:
        raise ValueError("dataset threshold needs at least one map pixel, got none")
    if values.size > max_samples:
        values = np.random.default_rng(seed).choice(values, max_samples, replace=False)
    k = int(np.ceil(keep * values.size))
    return float(np.partition(values, values.size - k)[values.size - k])


def threshold_mask(maps: np.ndarray, threshold: float) -> np.ndarray:
    """Pixels with ``value >= threshold``."""
    return np.asarray(maps) >= threshold


def fraction_of_max_mask(
    maps: np.ndarray, fraction: float = DEFAULT_MAX_FRACTION, per: str = "frame"
) -> np.ndarray:
    """CAM-paper mask: ``value >= fraction * max`` with the max taken per frame or per clip.

    ``maps``: ``(..., H, W)`` (``per='frame'``) or ``(..., T, H, W)`` (``per='clip'``).
    A map whose maximum is ``<= 0`` keeps nothing.
    """
    if not 0 <= fraction <= 1:
        raise ValueError(f"fraction must be in [0, 1], got {fraction}")
    m = np.asarray(maps, dtype=np.float64)
    axes = {"frame": (-2, -1), "clip": (-3, -2, -1)}
    if per not in axes:
        raise ValueError(f"per must be 'frame' or 'clip', got {per!r}")
    if m.ndim < len(axes[per]):
        raise ValueError(f"maps of shape {m.shape} have too few axes for per={per!r}")
    peak = m.max(axis=axes[per], keepdims=True)
    return (m >= fraction * peak) & (peak > 0)


def mask_for(kind: str, maps: np.ndarray, dataset_threshold: Optional[float] = None) -> np.ndarray:
    """Mask of ``maps`` under the named rule: ``'dataset'`` (needs the threshold) or ``'max20'``."""
    if kind == "dataset":
        if dataset_threshold is None:
            raise ValueError("the 'dataset' threshold needs the value computed over the set")
        return threshold_mask(maps, dataset_threshold)
    if kind == "max20":
        return fraction_of_max_mask(maps, DEFAULT_MAX_FRACTION)
    raise ValueError(f"unknown threshold {kind!r}; expected one of {THRESHOLD_KINDS}")


# --------------------------------------------------------------- exact, streaming, any ranks
_BINS = 1 << 16


def _keys(values: np.ndarray) -> np.ndarray:
    """float32 values -> uint32 keys in the same order (sign bit flipped; negatives inverted)."""
    bits = np.ascontiguousarray(values, dtype=np.float32).ravel().view(np.uint32)
    return np.where(bits >> 31 == 1, ~bits, bits | np.uint32(0x80000000))


def _value(key: int) -> float:
    bits = key & 0x7FFFFFFF if key >= 0x80000000 else ~key & 0xFFFFFFFF
    return float(np.array([bits], np.uint32).view(np.float32)[0])


def _pick(hist: np.ndarray, k: np.ndarray) -> tuple:
    """Per row: the bin holding the ``k``-th largest count-weighted entry, and how many of the
    wanted entries lie in that bin (``k`` minus the entries of higher bins)."""
    above = np.cumsum(hist[:, ::-1], axis=1)[:, ::-1]  # entries in bins >= b
    bins = np.array([int(np.nonzero(a >= kk)[0].max()) if kk > 0 else 0 for a, kk in zip(above, k)])
    higher = np.array([a[b + 1] if b + 1 < _BINS else 0 for a, b in zip(above, bins)])
    return bins, k - higher


def keep_fraction_thresholds(
    passes: Callable[[], Iterable[Dict[str, np.ndarray]]],
    kinds: Sequence[str],
    keep: float = DEFAULT_KEEP,
    reduce: Callable[[np.ndarray], np.ndarray] = lambda a: a,
) -> Dict[str, float]:
    """Exact :func:`dataset_keep_fraction_threshold` of each kind, streaming and shardable.

    ``passes()`` yields, once per call, this process's maps as ``{kind: array}`` dicts (one per
    clip); it is called twice. ``reduce`` sums an int64 array over processes (an all-reduce).
    Two radix passes over the 32-bit keys of the float32 values (high then low 16 bits) give
    the ``ceil(keep * n)``-th largest value of all ``n`` values of a kind over every process:
    exactly the single-process value, whatever the sharding, with no subsampling.
    Kinds with no values are left out of the result.
    """
    if not 0 < keep <= 1:
        raise ValueError(f"keep must be in (0, 1], got {keep}")
    kinds = list(kinds)
    high = np.zeros((len(kinds), _BINS), np.int64)
    for maps in passes():
        for i, kind in enumerate(kinds):
            if kind in maps:
                high[i] += np.bincount(_keys(maps[kind]) >> 16, minlength=_BINS)
    high = reduce(high)
    n = high.sum(axis=1)
    k = np.ceil(keep * n).astype(np.int64)
    hbin, rest = _pick(high, k)
    low = np.zeros_like(high)
    for maps in passes():
        for i, kind in enumerate(kinds):
            if kind in maps and n[i]:
                key = _keys(maps[kind])
                low[i] += np.bincount(key[(key >> 16) == hbin[i]] & 0xFFFF, minlength=_BINS)
    low = reduce(low)
    lbin, _ = _pick(low, rest)
    return {
        kind: _value((int(hbin[i]) << 16) | int(lbin[i])) for i, kind in enumerate(kinds) if n[i]
    }
