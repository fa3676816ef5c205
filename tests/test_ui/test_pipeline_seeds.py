"""The demo's comparisons over training seeds: where each seed's runs are, mean [min-max over
seeds] of each model and of TSM - TSN, the paired-bootstrap interval over the clips (against a
by-hand loop), whether a claimed effect holds (the interval above zero), the report's table and
figure."""

import json

import numpy as np
import pytest

from ui.pipeline.demo import summary
from ui.pipeline.report import write_report
from ui.runs.intervals import write_intervals
from ui.runs.layout import RunLayout
from ui.runs.seeds import interval, seed_layouts, signed, spreads, write_seeds
from ui.runs.spread import spread_figure, spread_rows


def put(path, obj):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj))


# per seed: TSN / TSM held-out top-1, mAP on corrupted frames, fast, strict pointing
FIGURES = {
    0: ((30.0, 100.0), (60.0, 70.0), (50.0, 49.0), (0.25, 0.75)),
    1: ((35.0, 97.5), (62.5, 64.0), (40.0, 45.0), (0.5, 0.625)),
    2: ((40.0, 100.0), (61.0, 73.0), (52.0, 51.0), (0.25, 0.875)),
}


CLIPS = 40  # held-out clips: the figures are k / 40 of them


def hits(seed, model, figure):
    """The clips a model gets right (top-1) or points at (one frame each): the first k."""
    return [i < round(figure * CLIPS) for i in range(CLIPS)]


def make_run(root, per_item=True):
    """Each seed's JSON files; ``per_item``: also the per-clip results (``test.json``'s
    ``top1_hit``, ``metrics.json``'s clips) that the paired bootstrap resamples."""
    write_seeds(root, 7, [0, 1, 2])
    for seed, (top1, corrupted, fast, point) in FIGURES.items():
        runs = RunLayout(root) if seed == 0 else RunLayout(root).seed_run(seed)
        for i, m in enumerate(("tsn", "tsm")):
            test = {"top1": top1[i]}
            if per_item:
                test["predictions"] = [
                    {"video": f"v{j}", "label": 0, "top1_hit": h}
                    for j, h in enumerate(hits(seed, m, top1[i] / 100))
                ]
            put(runs.recognizer_test(m), test)
            put(runs.detection_metrics(m), {"mAP_corrupted": corrupted[i], "mAP_fast": fast[i]})
            dis = {"aggregate": {"method": {"pointing": point[i]}}}
            if per_item:
                right = hits(seed, m, top1[i] / 100)
                dis["clips"] = {
                    f"v{j}": {
                        "label": 0,
                        "pred": 0 if right[j] else 1,
                        "scores": {"method": {"pointing": [h]}},
                    }
                    for j, h in enumerate(hits(seed, m, point[i]))
                }
            put(runs.dissection(m) / "metrics.json", dis)


def test_seed_layouts_first_seed_at_the_root(tmp_path):
    assert seed_layouts(tmp_path) == {None: RunLayout(tmp_path)}  # a single-seed run folder
    make_run(tmp_path)
    assert seed_layouts(tmp_path) == {
        0: RunLayout(tmp_path),
        1: RunLayout(tmp_path / "seeds" / "1"),
        2: RunLayout(tmp_path / "seeds" / "2"),
    }
    assert json.loads((tmp_path / "seeds.json").read_text()) == {
        "data_seed": 7,
        "training_seeds": [0, 1, 2],
    }


def test_signed_never_shows_minus_zero():
    assert [signed(v, 1) for v in (-0.04, 0.04, -0.06, 2.25)] == ["+0.0", "+0.0", "-0.1", "+2.2"]
    assert signed(-0.0004, 3, sign=False) == "0.000" and signed(0.5, 3, sign=False) == "0.500"


def by_hand_ci(num, den, scale=1.0):
    """The paired bootstrap written out: 2000 draws of the 40 clips from default_rng(0), the
    same for both models and every seed; the mean over seeds of TSM - TSN; 2.5 / 97.5 %."""
    draws = np.random.default_rng(0).integers(0, CLIPS, size=(2000, CLIPS))
    values = []
    for idx in draws:
        per_seed = []
        for s in range(3):
            tsn = num["tsn"][s][idx].sum() / den["tsn"][s][idx].sum()
            tsm = num["tsm"][s][idx].sum() / den["tsm"][s][idx].sum()
            per_seed.append(scale * (tsm - tsn))
        values.append(np.mean(per_seed))
    return np.percentile(values, [2.5, 97.5])


def _arrays(col, scale=1.0, both_correct=False):
    """Per model, per seed: the clips' hits (numerator) and weights (denominator)."""
    num, den = {}, {}
    for i, m in enumerate(("tsn", "tsm")):
        num[m], den[m] = [], []
        for f in FIGURES.values():
            h = np.array(hits(0, m, f[col][i] / scale), float)
            w = np.ones(CLIPS)
            if both_correct:  # both recognizers right: the first min(k_tsn, k_tsm) clips
                w = np.array(hits(0, m, min(f[0]) / 100), float)
            num[m].append(h * w)
            den[m].append(w)
    return num, den


def test_spreads_intervals_and_claims(tmp_path):
    make_run(tmp_path)
    found = {s.comparison.key: s for s in spreads(tmp_path)}
    assert sorted(found) == [
        "mAP_corrupted",
        "mAP_fast",
        "pointing",
        "pointing_both_correct",
        "top1",
    ]
    top1 = found["top1"]
    assert top1.seeds == [0, 1, 2] and top1.diff == [70.0, 62.5, 60.0]
    assert interval(top1.diff) == (pytest.approx(64.16666666), 60.0, 70.0) and top1.every_seed
    assert top1.holds is None and "no intervals.json" in top1.unavailable  # not computed yet
    write_intervals(tmp_path)
    found = {s.comparison.key: s for s in spreads(tmp_path)}
    top1, point = found["top1"], found["pointing"]
    lo, hi = by_hand_ci(*_arrays(0, 100.0), 100.0)
    assert (top1.interval.low, top1.interval.high) == (pytest.approx(lo), pytest.approx(hi))
    assert top1.interval.point == pytest.approx(64.16666666) and top1.holds is True
    assert (top1.interval.items, top1.interval.resamples) == (40, 2000)
    lo, hi = by_hand_ci(*_arrays(3))
    assert (point.interval.low, point.interval.high) == (pytest.approx(lo), pytest.approx(hi))
    both = found["pointing_both_correct"]
    lo, hi = by_hand_ci(*_arrays(3, both_correct=True))
    assert (both.interval.low, both.interval.high) == (pytest.approx(lo), pytest.approx(hi))
    assert both.counts == [12, 14, 16] and both.title.endswith("(n=12, 14, 16)")
    # detection: no results.json here, so no interval and no verdict (the fast split was
    # below zero at two seeds)
    fast = found["mAP_fast"]
    assert fast.diff == [-1.0, 5.0, -1.0] and not fast.every_seed and fast.holds is None
    assert fast.unavailable == "no detection/tsn/test/results.json"
    ci = f"{top1.interval.low:+.1f} to {top1.interval.high:+.1f}"
    assert summary(tmp_path)[:3] == [
        "recognition, held-out test top-1 (%): TSN 35.0 [30.0, 40.0], TSM 99.2 [97.5, 100.0], "
        f"TSM - TSN +64.2 [+60.0, +70.0], 95% CI {ci}; TSM ahead (interval above zero)",
        "R-FCN mAP, corrupted frames: TSN 61.2 [60.0, 62.5], TSM 69.0 [64.0, 73.0], "
        "TSM - TSN +7.8 [+1.5, +12.0] (no detection/tsn/test/results.json)",
        "R-FCN mAP, fast motion: TSN 47.3 [40.0, 52.0], TSM 48.3 [45.0, 51.0], "
        "TSM - TSN +1.0 [-1.0, +5.0] (no detection/tsn/test/results.json)",
    ]
    # results changed after intervals.json: its intervals are not shown
    put(RunLayout(tmp_path).recognizer_test("tsn"), {"top1": 31.0})
    stale = {s.comparison.key: s for s in spreads(tmp_path)}["top1"]
    assert stale.interval is None and "other results" in stale.unavailable
    # a seed missing one model's figure drops out of that comparison only
    (tmp_path / "seeds" / "2" / "recognizers" / "tsn" / "test.json").unlink()
    found = {s.comparison.key: s for s in spreads(tmp_path)}
    assert found["top1"].seeds == [0, 1] and found["pointing"].seeds == [0, 1, 2]


def test_without_per_item_results_the_ci_column_says_so(tmp_path):
    make_run(tmp_path, per_item=False)
    write_intervals(tmp_path)
    top1 = {s.comparison.key: s for s in spreads(tmp_path)}["top1"]
    assert top1.interval is None and top1.unavailable.startswith("no per-item results under")
    assert top1.holds is None


def test_report_rows_and_figure(tmp_path):
    make_run(tmp_path)
    md = write_report(tmp_path)[0].read_text()
    found = spreads(tmp_path)
    rows = spread_rows(found)
    assert rows[2] == [
        "R-FCN mAP, fast motion",
        "47.3 [40.0, 52.0]",
        "48.3 [45.0, 51.0]",
        "+1.0 [-1.0, +5.0]",
        "-1.0, +5.0, -1.0",
        "(no detection/tsn/test/results.json)",
        "",
    ]
    top1 = found[0].interval
    assert (
        "| recognition, held-out test top-1 (%) | 35.0 [30.0, 40.0] | 99.2 [97.5, 100.0] | "
        f"+64.2 [+60.0, +70.0] | +70.0, +62.5, +60.0 | {top1.low:+.1f} to {top1.high:+.1f} | yes |"
        in md
    )
    assert "| TSM - TSN 95% CI (paired bootstrap) | TSM ahead (CI above zero) |" in md
    assert "training seeds 0, 1, 2" in md and "mean [min-max over seeds]" in md
    assert "not an interval" in md and "2000 resamples of the test items" in md
    assert "no interval for R-FCN mAP, corrupted frames; R-FCN mAP, fast motion" in md
    assert "## What each comparison controls" in md
    assert "`model.backbone.shift`: TSN None, TSM 'online'" in md
    fig = spread_figure(found)
    seeds = [t for t in fig.data if t.name == "seed 1"]
    assert [list(t.y) for t in seeds] == [[-7.5 + 70.0], [1.5, 5.0], [0.125, 0.0]]
    means = [t for t in fig.data if t.name == "mean, min-max over seeds"]
    det = means[1]
    assert list(det.x) == ["corrupted frames", "fast motion"]
    assert list(det.error_y.array) == pytest.approx([12.0 - 23.5 / 3, 4.0])
    assert list(det.error_y.arrayminus) == pytest.approx([23.5 / 3 - 1.5, 2.0])


def test_detectors_trained_with_other_seeds_are_reported_under_them(tmp_path):
    make_run(tmp_path)
    write_seeds(tmp_path, 7, [0, 1, 2], detection_offset=4)
    assert json.loads((tmp_path / "seeds.json").read_text())["detection_seeds"] == [4, 5, 6]
    found = {s.comparison.key: s for s in spreads(tmp_path)}
    assert found["mAP_fast"].seeds == [4, 5, 6] and found["top1"].seeds == [0, 1, 2]
    assert found["mAP_fast"].diff == [-1.0, 5.0, -1.0]  # the same runs
    md = write_report(tmp_path)[0].read_text()
    assert "training seeds 0, 1, 2 (the detectors': 4, 5, 6)" in md
    assert "detection on the synthetic VID set's held-out test snippets" in md
