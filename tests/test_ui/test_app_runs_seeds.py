"""Runs view: TSM vs TSN over the training seeds of a demo run folder (AppTest): the report's
headline rows with the paired-bootstrap CI column (from intervals.json), the per-seed points and
min-max bars; without results, a line saying how."""

from __future__ import annotations

import json

from test_pipeline_seeds import make_run
from ui.runs.intervals import write_intervals
from ui_fixtures import shown_cells


def _open_runs(app_for, runs):
    at = app_for(runs).run()
    at.sidebar.radio(key="view").set_value("Runs").run()
    assert not at.exception and not at.error
    return at


def test_runs_view_shows_the_spread_over_seeds(app_for, empty_runs):
    make_run(empty_runs)
    ci = json.loads(write_intervals(empty_runs).read_text())["comparisons"]
    at = _open_runs(app_for, empty_runs)
    table = next(d for d in at.dataframe if "TSM - TSN per seed" in d.value.columns)
    shown = shown_cells(table)
    assert list(shown["comparison"])[:2] == [
        "recognition, held-out test top-1 (%)",
        "R-FCN mAP, corrupted frames",
    ]
    assert list(shown["TSM - TSN"]) == [
        "+64.2 [+60.0, +70.0]",
        "+7.8 [+1.5, +12.0]",
        "+1.0 [-1.0, +5.0]",
        "+0.417 [+0.125, +0.625]",
        "+0.181 [+0.000, +0.375]",
    ]
    top1 = ci["top1"]["interval"]
    assert list(shown["TSM - TSN 95% CI (paired bootstrap)"])[0] == (
        f"{top1['low']:+.1f} to {top1['high']:+.1f}"
    )
    assert list(shown["TSM - TSN 95% CI (paired bootstrap)"])[1] == (
        "(no detection/tsn/test/results.json)"
    )
    assert list(shown["TSM ahead (CI above zero)"]) == ["yes", "–", "–", "yes", "–"]
    spec = next(
        json.loads(c.proto.spec)
        for c in at.get("plotly_chart")
        if "training seed" in json.loads(c.proto.spec)["layout"]["title"]["text"]
    )
    points = [t for t in spec["data"] if t["name"] == "seed 2"]
    assert [t["y"] for t in points] == [[60.0], [12.0, -1.0], [0.625, 0.375]]
    assert any("training seeds 0, 1, 2" in c.value for c in at.caption)


def test_runs_view_without_results_says_how(app_for, empty_runs):
    at = _open_runs(app_for, empty_runs)
    assert any("No TSM-vs-TSN results of both models found (`tsm demo`" in i.value for i in at.info)
