"""The paired bootstrap of a TSM-minus-TSN comparison over the test items.

The test items (clips for recognition and dissection, snippets for detection: the unit that is
independent) are drawn with replacement, ``resamples`` times, from a seeded numpy Generator.
A resample is the ``(N,)`` count of how often each item was drawn: ``counts[b, i]`` copies of
item ``i`` (duplicates count as many times as drawn). The SAME resample serves both arms (TSN,
TSM) and every training seed, so what the items share (an easy clip, a hard snippet) cancels in
the difference. The statistic of a resample is the mean over the training seeds of
``metric_TSM(resample) - metric_TSN(resample)``, the metric recomputed on the resampled items;
the interval is the ``(1 - level) / 2`` and ``(1 + level) / 2`` percentiles (numpy's linear
interpolation) of the resamples' statistics. The point estimate is the statistic of the full
sample (every item once).

The statistic is a callable ``counts (b, N) -> (b,)`` so that any metric fits (detection mAP
lives with the detector). :func:`ratio_statistic` is the one of the metrics that are a ratio of
sums over items (top-1, pointing, a mean of per-clip values).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

RESAMPLES = 2000
LEVEL = 0.95
BATCH = 200  # resamples evaluated at once (memory: BATCH x items counts)

Statistic = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class BootstrapInterval:
    """A paired-bootstrap interval: ``point`` (full sample), ``low``/``high`` (the percentile
    interval at ``level``), ``resamples`` (those with the statistic defined, of ``drawn``) and
    ``items`` (the test items resampled)."""

    point: float
    low: float
    high: float
    resamples: int
    drawn: int
    items: int
    level: float = LEVEL

    @property
    def excludes_zero(self) -> bool:
        """Whether the whole interval lies on one side of zero."""
        return self.low > 0 or self.high < 0

    def to_dict(self) -> dict:
        return {
            "point": self.point,
            "low": self.low,
            "high": self.high,
            "resamples": self.resamples,
            "drawn": self.drawn,
            "items": self.items,
            "level": self.level,
        }


def resample_indices(items: int, resamples: int = RESAMPLES, seed: int = 0) -> np.ndarray:
    """``(resamples, items)`` indices drawn with replacement: ``default_rng(seed).integers(0,
    items, (resamples, items))``."""
    if items < 1 or resamples < 1:
        raise ValueError(f"need >= 1 item and >= 1 resample, got {items} and {resamples}")
    return np.random.default_rng(seed).integers(0, items, size=(resamples, items))


def counts_of(indices: np.ndarray, items: int) -> np.ndarray:
    """``(B, items)`` how often each item occurs in each row of ``indices (B, n)``."""
    idx = np.asarray(indices)
    if idx.ndim != 2:
        raise ValueError(f"indices must be (B, n), got shape {idx.shape}")
    rows = np.arange(idx.shape[0])[:, None] * items + idx
    return np.bincount(rows.ravel(), minlength=idx.shape[0] * items).reshape(-1, items)


def percentile_interval(values: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    """The ``(1 - level) / 2`` and ``(1 + level) / 2`` percentiles of ``values`` (linear)."""
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    lo, hi = np.percentile(np.asarray(values, np.float64), [50 - 50 * level, 50 + 50 * level])
    return float(lo), float(hi)


def paired_bootstrap(
    statistic: Statistic,
    items: int,
    resamples: int = RESAMPLES,
    seed: int = 0,
    level: float = LEVEL,
    point: Optional[float] = None,
) -> BootstrapInterval:
    """The interval of ``statistic`` (``counts (b, items) -> (b,)``, NaN where undefined) over
    ``resamples`` draws of the items (:func:`resample_indices`); resamples whose statistic is
    NaN are left out (``resamples`` < ``drawn``). ``point``: the full-sample figure when it is
    known exactly (the reported one); the statistic of the full sample must agree with it to
    1e-9 (``ValueError`` otherwise, or when it is NaN)."""
    full = float(np.asarray(statistic(np.ones((1, items), np.int64)))[0])
    if np.isnan(full):
        raise ValueError(f"the statistic is undefined on the full sample of {items} items")
    if point is not None and abs(full - point) > 1e-9 * max(1.0, abs(point)):
        raise ValueError(f"the statistic of the full sample, {full!r}, is not the point {point!r}")
    point = full if point is None else float(point)
    idx = resample_indices(items, resamples, seed)
    values = np.concatenate(
        [
            np.asarray(statistic(counts_of(idx[i : i + BATCH], items)), np.float64)
            for i in range(0, resamples, BATCH)
        ]
    )
    if values.shape != (resamples,):
        raise ValueError(f"the statistic gave shape {values.shape}, expected ({resamples},)")
    kept = values[~np.isnan(values)]
    if not kept.size:
        raise ValueError(f"the statistic is undefined on all {resamples} resamples")
    lo, hi = percentile_interval(kept, level)
    return BootstrapInterval(point, lo, hi, int(kept.size), resamples, items, level)


def ratio_statistic(
    numerator: np.ndarray, denominator: np.ndarray, scale: float = 1.0
) -> Statistic:
    """The statistic of a metric that is ``scale * sum(numerator) / sum(denominator)`` over the
    items (top-1: hits / 1; frame-pooled pointing: hits / frames with a box; a mean of per-clip
    values: value / 1, with 0 / 0 for a clip where it is undefined).

    ``numerator``, ``denominator``: ``(2, S, N)`` -- arm (TSN, TSM), training seed, item.
    A resample where some seed's or arm's denominator is 0 gives NaN."""
    num, den = np.asarray(numerator, np.float64), np.asarray(denominator, np.float64)
    if num.ndim != 3 or num.shape[0] != 2 or num.shape != den.shape:
        raise ValueError(
            f"numerator and denominator must both be (2, S, N), got {num.shape} and {den.shape}"
        )

    def statistic(counts: np.ndarray) -> np.ndarray:
        c = np.asarray(counts, np.float64)  # (b, N)
        top, bottom = np.einsum("bn,asn->asb", c, num), np.einsum("bn,asn->asb", c, den)
        with np.errstate(invalid="ignore", divide="ignore"):
            metric = scale * top / np.where(bottom > 0, bottom, np.nan)
        return (metric[1] - metric[0]).mean(axis=0)

    return statistic
