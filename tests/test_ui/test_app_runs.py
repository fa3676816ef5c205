"""Runs view: training curves, benchmark table (AppTest)."""

from __future__ import annotations

import json

from tsm_apps.bench.timing import Figure
from tsm_apps.train.log import MetricsLog
from ui_fixtures import shown_cells


def _write_runs(runs):
    """Two training logs written by the trainer's logger and a ``tsm bench`` style report."""
    for name, slope in (("tsn", 1.0), ("tsm", 2.0)):
        log = MetricsLog(runs / "train" / name, tensorboard=False)
        for epoch in range(3):
            step = 10 * (epoch + 1)
            log.write(epoch=epoch, step=step, split="train", loss=3.0 - slope * epoch / 4)
            log.write(
                epoch=epoch,
                step=step,
                split="val",
                loss=3.5 - slope * epoch / 4,
                top1=10.0 * slope * epoch,
            )
        log.close()
    figs = [
        Figure("shift overhead", 1.03, "x", goal="< 1.05", met=True),
        Figure("online cache", 0.9, "MB"),
    ]
    bench = runs / "bench" / "bench.json"
    bench.parent.mkdir()
    bench.write_text(
        json.dumps(
            {
                "machine": {"cpus": 2},
                "quick": True,
                "seconds": 1.0,
                "figures": [f.to_dict() for f in figs],
            }
        )
    )


def _traces(at, i=0):
    return {
        t["name"] + f"@{t.get('xaxis', 'x')}": t
        for t in json.loads(at.get("plotly_chart")[i].proto.spec)["data"]
    }


def test_runs_view_curves_and_bench(app_for, empty_runs):
    _write_runs(empty_runs)
    at = app_for(empty_runs).run()
    at.sidebar.radio(key="view").set_value("Runs").run()
    assert not at.exception and not at.error
    assert at.multiselect(key="runs_metrics").value == ["loss", "top1"]
    traces = _traces(at)
    # loss panel (x): train and val of both runs; top1 panel (x2): val only
    assert sorted(traces) == [
        "train/tsm train@x",
        "train/tsm val@x",
        "train/tsm val@x2",
        "train/tsn train@x",
        "train/tsn val@x",
        "train/tsn val@x2",
    ]
    assert traces["train/tsm train@x"]["x"] == [10.0, 20.0, 30.0]
    assert traces["train/tsm train@x"]["y"] == [3.0, 2.5, 2.0]
    assert traces["train/tsn val@x2"]["y"] == [0.0, 10.0, 20.0]
    at.radio(key="runs_x").set_value("epoch").run()
    assert _traces(at)["train/tsm train@x"]["x"] == [0.0, 1.0, 2.0]
    table = at.dataframe[0].value
    assert list(table["name"]) == ["shift overhead", "online cache"]
    assert list(table["value"]) == [1.03, 0.9]
    shown = shown_cells(at.dataframe[0])  # two decimals; no goal or met: a dash, never None
    assert list(shown["value"]) == ["1.03", "0.90"]
    assert list(shown["goal"]) == ["< 1.05", "–"] and list(shown["met"]) == ["yes", "–"]
    # the cells themselves hold the dash: the browser's grid writes a null cell as "None"
    assert list(table["goal"]) == ["< 1.05", "–"] and list(table["met"]) == ["yes", "–"]
    assert not table.isna().to_numpy().any()
    # deselecting a run leaves the other one's lines only
    sel = at.multiselect(key="runs_logs")
    tsn = next(p for p in sel.value if "tsn" in p)
    sel.unselect(tsn).run()
    assert all(name.startswith("train/tsm") for name in _traces(at))


def test_runs_view_bad_log_is_a_message(app_for, empty_runs):
    bad = empty_runs / "train" / "x" / "metrics.csv"
    bad.parent.mkdir(parents=True)
    bad.write_text("epoch,step,loss\n0,1,oops\n")
    at = app_for(empty_runs).run()
    at.sidebar.radio(key="view").set_value("Runs").run()
    assert not at.exception
    assert any("column 'loss' holds 'oops'" in e.value for e in at.error)


def test_every_run_is_shown_by_default_in_path_order(app_for, empty_runs):
    """Five seeds' logs: the curves start with all of them (seed 0 first), not the newest few."""
    for seed in (2, 0, 4, 1, 3):
        log = MetricsLog(empty_runs / "seeds" / str(seed) / "tsm", tensorboard=False)
        log.write(epoch=0, step=1, split="train", loss=1.0 + seed)
        log.close()
    at = app_for(empty_runs).run()
    at.sidebar.radio(key="view").set_value("Runs").run()
    assert not at.exception and not at.error
    assert [p.split("/seeds/")[1] for p in at.multiselect(key="runs_logs").value] == [
        f"{s}/tsm/metrics.csv" for s in range(5)
    ]
    assert sorted(_traces(at)) == [f"seeds/{s}/tsm train@x" for s in range(5)]
