"""Runs view: the early-recognition figure of an ``early.csv`` written by ``tsm test --online``
(AppTest), and the demo report's early-recognition section."""

from __future__ import annotations

import json

from tsm_apps.evaluation.early_files import write_early
from ui.pipeline.report import write_report
from ui.runs.layout import RunLayout

RES = {
    "fractions": [0.1, 0.5, 1.0],
    "videos": 60,
    "top1": {
        "tsn": [10.0, 15.0, 23.3333],
        "tsm_offline": [11.6667, 16.6667, 35.0],
        "tsm_online": [15.0, 26.6667, 26.6667],
    },
}


def _charts(at) -> list:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def test_runs_view_draws_early_recognition(app_for, empty_runs):
    write_early(RES, empty_runs / "e17" / "early")
    at = app_for(empty_runs).run()
    at.sidebar.radio(key="view").set_value("Runs").run()
    assert not at.exception and not at.error
    spec = next(s for s in _charts(at) if "Early recognition" in s["layout"]["title"]["text"])
    assert "e17/early/early.csv" in spec["layout"]["title"]["text"]
    lines = {t["name"]: t for t in spec["data"] if t["type"] == "scatter"}
    assert list(lines) == ["TSN", "offline TSM", "online TSM"]
    assert lines["online TSM"]["x"] == [10.0, 50.0, 100.0]
    assert lines["online TSM"]["y"] == [15.0, 26.6667, 26.6667]
    bars = [t for t in spec["data"] if t["type"] == "bar"]
    assert bars[0]["x"] == ["online TSM", "offline TSM"] and bars[0]["y"] == [26.6667, 35.0]
    assert "whole video: online TSM 26.7% top-1, offline TSM 35.0% top-1" in [
        c.value for c in at.caption
    ]


def test_runs_view_without_early_csv_says_so(app_for, empty_runs):
    at = app_for(empty_runs).run()
    at.sidebar.radio(key="view").set_value("Runs").run()
    assert any(
        "No early-recognition results (`early.csv`" in i.value
        and f"`tsm demo --extras --out {empty_runs}` adds them" in i.value
        for i in at.info
    )
    assert any(
        f"No benchmark results (`bench.json`, written by `tsm bench`) found: `tsm demo "
        f"--extras --out {empty_runs}` adds them" in i.value
        for i in at.info
    )


def test_runs_view_bad_early_csv_is_a_message(app_for, empty_runs):
    bad = empty_runs / "x" / "early.csv"
    bad.parent.mkdir()
    bad.write_text("fraction,tsn\n0.1,oops\n")
    at = app_for(empty_runs).run()
    at.sidebar.radio(key="view").set_value("Runs").run()
    assert not at.exception
    assert any("x/early.csv:2: column 'tsn' holds 'oops'" in e.value for e in at.error)


def test_report_shows_early_recognition_when_present(tmp_path):
    md = write_report(tmp_path)[0].read_text()
    assert "not part of this run: `tsm demo --extras` adds it (`tsm test ONLINE.pth --online" in md
    assert f"`tsm bench --quick --out {tmp_path}/bench/bench.json`" in md
    write_early(RES, RunLayout(tmp_path).early_csv.parent)
    md_path, html_path = write_report(tmp_path)
    md = md_path.read_text()
    assert "| method | 10% | 50% | 100% |" in md
    assert "| online TSM | 15.000 | 26.667 | 26.667 |" in md
    assert "whole video: online TSM 26.7%, offline TSM 35.0%" in md
    page = html_path.read_text()
    assert page.count("Early recognition (top-1 vs fraction of the video seen)") >= 2  # h2 + fig
    assert '"name":"online TSM"' in page
