"""Map thresholds, named for what they are.

* :func:`dataset_keep_fraction_threshold` — the TSM paper's rule (section 8): one threshold for
  the whole evaluated set, chosen so that ``keep`` (20%) of all map pixels are kept.
* :func:`fraction_of_max_mask` — the CAM paper's rule (Zhou et al. 2016): keep the pixels above
  ``fraction`` (20%) of the map's maximum, per frame (or per clip).

Maps are arrays whose last two axes are ``(H, W)``; masks are boolean arrays of the same shape.
"""
from __future__ import annotations

from typing import Iterable, Optional

import numpy as np

DEFAULT_KEEP = 0.2
DEFAULT_MAX_FRACTION = 0.2
MAX_THRESHOLD_SAMPLES = 20_000_000
THRESHOLD_KINDS = ("dataset", "max20")


def dataset_keep_fraction_threshold(maps: Iterable[np.ndarray], keep: float = DEFAULT_KEEP,
                                    max_samples: int = MAX_THRESHOLD_SAMPLES,
                                    seed: int = 0) -> float:
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


def fraction_of_max_mask(maps: np.ndarray, fraction: float = DEFAULT_MAX_FRACTION,
                         per: str = "frame") -> np.ndarray:
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
