"""The demo's comparisons over training seeds: where each seed's runs are, mean [min, max] of
each model and of TSM - TSN, whether a claimed effect holds at every seed, the report's table and
figure."""

import json

import pytest

from ui.pipeline.demo import summary
from ui.pipeline.report import write_report
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


def make_run(root):
    write_seeds(root, 7, [0, 1, 2])
    for seed, (top1, corrupted, fast, point) in FIGURES.items():
        runs = RunLayout(root) if seed == 0 else RunLayout(root).seed_run(seed)
        for i, m in enumerate(("tsn", "tsm")):
            put(runs.recognizer_test(m), {"top1": top1[i]})
            put(runs.detection_metrics(m), {"mAP_corrupted": corrupted[i], "mAP_fast": fast[i]})
            put(
                runs.dissection(m) / "metrics.json",
                {"aggregate": {"method": {"pointing": point[i]}}},
            )


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


def test_spreads_intervals_and_claims(tmp_path):
    make_run(tmp_path)
    found = {s.comparison.key: s for s in spreads(tmp_path)}
    assert sorted(found) == ["mAP_corrupted", "mAP_fast", "pointing", "top1"]
    top1 = found["top1"]
    assert top1.seeds == [0, 1, 2] and top1.diff == [70.0, 62.5, 60.0]
    assert interval(top1.diff) == (pytest.approx(64.16666666), 60.0, 70.0) and top1.holds is True
    assert found["mAP_fast"].diff == [-1.0, 5.0, -1.0] and found["mAP_fast"].holds is False
    assert summary(tmp_path) == [
        "recognition, held-out test top-1 (%): TSN 35.0 [30.0, 40.0], TSM 99.2 [97.5, 100.0], "
        "TSM - TSN +64.2 [+60.0, +70.0]; TSM ahead at every seed",
        "R-FCN mAP, corrupted frames: TSN 61.2 [60.0, 62.5], TSM 69.0 [64.0, 73.0], "
        "TSM - TSN +7.8 [+1.5, +12.0]; TSM ahead at every seed",
        "R-FCN mAP, fast motion: TSN 47.3 [40.0, 52.0], TSM 48.3 [45.0, 51.0], "
        "TSM - TSN +1.0 [-1.0, +5.0]; TSM NOT ahead at every seed",
        "dissection, pointing game, strict (held-out test clips): TSN 0.333 [0.250, 0.500], "
        "TSM 0.750 [0.625, 0.875], TSM - TSN +0.417 [+0.125, +0.625]; TSM ahead at every seed",
    ]
    # a seed missing one model's figure drops out of that comparison only
    (tmp_path / "seeds" / "2" / "recognizers" / "tsn" / "test.json").unlink()
    found = {s.comparison.key: s for s in spreads(tmp_path)}
    assert found["top1"].seeds == [0, 1] and found["pointing"].seeds == [0, 1, 2]


def test_report_rows_and_figure(tmp_path):
    make_run(tmp_path)
    found = spreads(tmp_path)
    rows = spread_rows(found)
    assert rows[2] == [
        "R-FCN mAP, fast motion",
        "47.3 [40.0, 52.0]",
        "48.3 [45.0, 51.0]",
        "+1.0 [-1.0, +5.0]",
        "-1.0, +5.0, -1.0",
        "no",
    ]
    md = write_report(tmp_path)[0].read_text()
    assert (
        "| R-FCN mAP, corrupted frames | 61.2 [60.0, 62.5] | 69.0 [64.0, 73.0] | "
        "+7.8 [+1.5, +12.0] | +10.0, +1.5, +12.0 | yes |" in md
    )
    assert "training seeds 0, 1, 2" in md
    assert (
        "NOT every claimed effect holds at every seed: R-FCN mAP, fast motion (its [min, max] "
        "interval reaches zero or below)" in md
    )
    fig = spread_figure(found)
    seeds = [t for t in fig.data if t.name == "seed 1"]
    assert [list(t.y) for t in seeds] == [[-7.5 + 70.0], [1.5, 5.0], [0.125]]
    means = [t for t in fig.data if t.name == "mean [min, max]"]
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
