"""The paired bootstrap against by-hand numpy loops: the same draws for both arms and every
seed, the percentile interval, the collapse on identical items and what pairing buys."""

import numpy as np
import pytest

from tsm_apps.evaluation.bootstrap import (
    counts_of,
    paired_bootstrap,
    percentile_interval,
    ratio_statistic,
    resample_indices,
)


def _hits(seed: int, seeds: int = 3, n: int = 30) -> tuple:
    rng = np.random.default_rng(seed)
    tsn = rng.random((seeds, n)) < 0.6
    tsm = rng.random((seeds, n)) < 0.7
    return tsn.astype(float), tsm.astype(float)


def test_matches_a_by_hand_loop_over_the_same_draws():
    tsn, tsm = _hits(0)
    n, b = tsn.shape[1], 300
    stat = ratio_statistic(np.stack([tsn, tsm]), np.ones((2, *tsn.shape)), scale=100.0)
    ci = paired_bootstrap(stat, n, resamples=b, seed=5)
    rng = np.random.default_rng(5)
    draws = rng.integers(0, n, size=(b, n))
    values = []
    for idx in draws:  # the same items for both arms and every seed
        values.append(
            np.mean([100 * tsm[s, idx].mean() - 100 * tsn[s, idx].mean() for s in range(3)])
        )
    lo, hi = np.percentile(values, [2.5, 97.5])
    assert ci.point == pytest.approx(100 * (tsm.mean() - tsn.mean()), abs=1e-12)
    assert (ci.low, ci.high) == (pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12))
    assert (ci.resamples, ci.drawn, ci.items, ci.level) == (b, b, n, 0.95)


def test_identical_items_collapse_the_interval_to_the_point():
    tsn = np.full((2, 12), 0.25)
    tsm = np.full((2, 12), 0.75)
    ci = paired_bootstrap(ratio_statistic(np.stack([tsn, tsm]), np.ones((2, 2, 12))), 12)
    assert ci.point == ci.low == ci.high == 0.5 and ci.excludes_zero


def test_a_shared_per_item_offset_cancels():
    """Per-clip values = a large item effect + a small model effect: paired, the interval is
    the model effect's; drawn separately per arm it is wide and reaches zero."""
    rng = np.random.default_rng(1)
    item = rng.normal(0, 10, 40)
    tsn = item + rng.normal(0, 0.1, 40)
    tsm = item + 0.5 + rng.normal(0, 0.1, 40)
    ones = np.ones((2, 1, 40))
    paired = paired_bootstrap(ratio_statistic(np.stack([tsn, tsm])[:, None], ones), 40)
    # unpaired by hand: each arm its own draws
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 40, (2000, 40)), rng.integers(0, 40, (2000, 40))
    lo, hi = percentile_interval(tsm[b].mean(axis=1) - tsn[a].mean(axis=1))
    assert paired.excludes_zero and 0.4 < paired.low < paired.high < 0.6
    assert lo < 0 < hi and (hi - lo) > 20 * (paired.high - paired.low)


def test_percentile_interval_is_numpys_linear_percentile():
    v = np.arange(101.0)
    assert percentile_interval(v) == (2.5, 97.5)
    assert percentile_interval(v, 0.5) == (25.0, 75.0)


def test_counts_and_undefined_resamples():
    idx = resample_indices(4, 3, seed=2)
    assert idx.shape == (3, 4)
    c = counts_of(idx, 4)
    for row, cnt in zip(idx, c):
        assert list(cnt) == [int((row == i).sum()) for i in range(4)]
    # item 0 is the only one with a positive denominator: resamples without it are NaN, left out
    num = np.array([[[1.0, 0, 0, 0]], [[1.0, 0, 0, 0]]])
    den = np.array([[[1.0, 0, 0, 0]], [[1.0, 0, 0, 0]]])
    ci = paired_bootstrap(ratio_statistic(num, den), 4, resamples=100, seed=0)
    hand = (resample_indices(4, 100, seed=0) == 0).any(axis=1).sum()
    assert ci.resamples == hand < ci.drawn == 100 and ci.low == ci.high == 0.0


def test_bad_inputs_name_the_shape():
    with pytest.raises(ValueError, match=r"\(2, S, N\)"):
        ratio_statistic(np.ones((3, 1, 4)), np.ones((3, 1, 4)))
    with pytest.raises(ValueError, match="not the point"):
        paired_bootstrap(ratio_statistic(np.ones((2, 1, 3)), np.ones((2, 1, 3))), 3, point=1.0)
    with pytest.raises(ValueError, match="level"):
        percentile_interval([1.0], 1.5)
