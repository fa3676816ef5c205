"""Runs view: TSM vs TSN over the training seeds of a demo run folder (AppTest): the report's
headline rows, the per-seed points and [min, max] bars; without results, a line saying how."""

from __future__ import annotations

import json

from test_pipeline_seeds import make_run
from ui_fixtures import shown_cells


def _open_runs(app_for, runs):
    at = app_for(runs).run()
    at.sidebar.radio(key="view").set_value("Runs").run()
    assert not at.exception and not at.error
    return at


def test_runs_view_shows_the_spread_over_seeds(app_for, empty_runs):
    make_run(empty_runs)
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
    ]
    assert list(shown["TSM ahead at every seed"]) == ["yes", "yes", "no", "yes"]
    spec = next(
        json.loads(c.proto.spec)
        for c in at.get("plotly_chart")
        if "training seed" in json.loads(c.proto.spec)["layout"]["title"]["text"]
    )
    points = [t for t in spec["data"] if t["name"] == "seed 2"]
    assert [t["y"] for t in points] == [[60.0], [12.0, -1.0], [0.625]]
    assert any("training seeds 0, 1, 2" in c.value for c in at.caption)


def test_runs_view_without_results_says_how(app_for, empty_runs):
    at = _open_runs(app_for, empty_runs)
    assert any("No TSM-vs-TSN results of both models found (`tsm demo`" in i.value for i in at.info)
