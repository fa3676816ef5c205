"""The report's charts (one panel per metric, reference lines) and pictures (clips chosen by
rule, detection frames where online TSM finds what TSN misses) on hand-made run folders."""

from __future__ import annotations

import json

import pytest

from ui.pipeline.report import write_report
from ui.pipeline.report.dissection import dissection_table
from ui.pipeline.report.pictures import choose_clips, detection_section, missed_by_tsn
from ui.pipeline.report.tables import recognition_table
from ui_fixtures import write_vid_annotations, write_vid_snippet

SNIPPET = "ILSVRC2015_val_00000000"


def put(path, obj):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj))


def test_clips_chosen_by_rule():
    def rec(tsn_pred, tsm_pred, label=1):
        return {
            "tsn": {"pred": tsn_pred, "label": label},
            "tsm": {"pred": tsm_pred, "label": label},
        }

    records = {"c": rec(0, 1), "a": rec(1, 1), "b": rec(0, 1), "d": rec(0, 2), "e": rec(1, 0)}
    assert choose_clips(records) == [
        ("TSM right, TSN wrong", "b"),
        ("both right", "a"),
        ("both wrong", "d"),
    ]
    assert choose_clips(records, per_rule=2)[:2] == [
        ("TSM right, TSN wrong", "b"),
        ("TSM right, TSN wrong", "c"),
    ]


def test_recognition_and_dissection_panels_keep_units_apart(tmp_path):
    for m, top1 in (("tsn", 20.0), ("tsm", 95.0)):
        put(
            tmp_path / "recognizers" / m / "eval.json",
            {"top1": top1, "top5": 90.0, "classes": ["a", "b", "c", "d", "e", "f", "g", "h"]},
        )
        put(
            tmp_path / "dissect" / m / "metrics.json",
            {
                "accuracy": top1 / 100,
                "aggregate": {
                    "method": {"pointing": 0.5, "mass_ratio": 3.0, "clips": 2},
                    "centre": {"pointing": 0.25, "mass_ratio": 1.0},
                    "random": {"pointing": 0.125},
                },
            },
        )
    fig = recognition_table(tmp_path).figure
    titles = [a.text for a in fig.layout.annotations]
    assert titles == ["top-1", "top-5"]
    bars = [(t.name, t.y[0]) for t in fig.data if t.type == "bar"]
    assert bars == [("TSN", 20.0), ("TSM", 95.0), ("TSN", 90.0), ("TSM", 90.0)]  # no class count
    lines = [(t.name, list(t.y)) for t in fig.data if t.type == "scatter"]
    assert lines == [("chance", [12.5, 12.5]), ("chance", [62.5, 62.5])]  # 100/8, 500/8
    fig = dissection_table(tmp_path).figure
    titles = [a.text for a in fig.layout.annotations]
    assert titles == ["pointing", "mass_ratio", "accuracy"]  # metrics without values left out
    panel = {"x": titles[0], "x2": titles[1], "x3": titles[2]}  # subplot i draws on axis x<i>
    refs = {(panel[t.xaxis], t.name): list(t.y) for t in fig.data if t.type == "scatter"}
    assert refs[("pointing", "centre prior")] == [0.25, 0.25]
    assert refs[("pointing", "random map")] == [0.125, 0.125]
    assert refs[("mass_ratio", "centre prior")] == [1.0, 1.0]
    assert refs[("accuracy", "chance")] == [0.125, 0.125]
    units = [fig.layout[f"yaxis{i or ''}"].title.text for i in (0, 2, 3)]
    assert units == ["score", "ratio", "fraction of clips"]


def _detections(runs, found: dict, relative: tuple = ()):
    """results.json of both detectors: in each frame listed in ``found[m]`` a box on the car;
    the detectors in ``relative`` name frames relative to ``runs``' parent (an older file)."""
    for m, frames in found.items():
        img = runs / "data" / "vid" / "Data" / "VID" / "val" / SNIPPET
        img = img.relative_to(runs.parent) if m in relative else img
        rows = []
        for t in range(6):
            box = [[8 + 10 * t, 20, 28 + 10 * t, 40]] if t in frames else [[60, 0, 90, 10]]
            rows.append(
                {
                    "img_path": str(img / f"{t:06d}.JPEG"),
                    "boxes": box,
                    "scores": [0.9],
                    "labels": [0],
                }
            )
        put(runs / "detection" / m / "test" / "results.json", {"classes": ["car"], "frames": rows})


def test_detection_frames_tsm_finds_and_tsn_misses_corrupted_first(tmp_path):
    runs = tmp_path / "runs"
    write_vid_snippet(runs / "data" / "vid")
    write_vid_annotations(runs / "data" / "vid", skip=(2,))
    put(runs / "data" / "vid" / "corruptions.json", {"val": {SNIPPET: {"4": "blur"}}})
    _detections(runs, {"tsn": {0, 3}, "tsm": {0, 1, 2, 3, 4, 5}})
    frames = missed_by_tsn(runs)
    # frame 2 has no object, 0 and 3 are found by both; 4 is corrupted: first
    assert [int(f["path"][-11:-5]) for f in frames] == [4, 1, 5]
    assert frames[0]["corruption"] == "blur" and frames[1]["corruption"] is None
    assert all(f["fast"] and f["objects"] == ["car"] for f in frames)  # 10 px/frame, 20 px box
    html = detection_section(runs, limit=2)
    assert "3 such frames; the first 2 shown" in html
    assert html.count("<h3>") == 2 and html.count("data:image/png;base64,") == 4
    assert "000004.JPEG — corrupted (blur), fast object; TSM alone finds car" in html


def test_detection_frames_pair_an_older_relative_file_with_an_absolute_one(tmp_path, monkeypatch):
    runs = tmp_path / "runs"
    write_vid_snippet(runs / "data" / "vid")
    write_vid_annotations(runs / "data" / "vid", skip=(2,))
    _detections(runs, {"tsn": {0, 3}, "tsm": {0, 1, 2, 3, 4, 5}}, relative=("tsn",))
    monkeypatch.chdir(tmp_path)  # the folder the older file's paths start from
    frames = missed_by_tsn(runs)
    assert [int(f["path"][-11:-5]) for f in frames] == [1, 4, 5]


def test_report_html_holds_the_pictures(tmp_path):
    runs = tmp_path / "runs"
    write_vid_snippet(runs / "data" / "vid")
    write_vid_annotations(runs / "data" / "vid")
    _detections(runs, {"tsn": set(), "tsm": {1}})
    md, page = write_report(runs)
    text = page.read_text()
    assert "frames where online TSM finds an object TSN misses" in text
    assert "1 such frames" in text and text.count("src='data:image/png;base64,") == 2
    assert "missing: the dissection runs" in text
    assert "see REPORT.html" in md.read_text()


@pytest.mark.slow
def test_cam_strips_of_real_dissection_runs(tmp_path):
    from dissect.layout import load_run
    from ui.pipeline.report.pictures import RULES, cam_section
    from ui_fixtures import write_dissection_runs, write_temporal_data

    runs = tmp_path / "runs"
    write_dissection_runs(runs, write_temporal_data(tmp_path / "data"), overlays=True, limit=6)
    html = cam_section(runs)
    loaded = {m: load_run(runs / "dissect" / m) for m in ("tsn", "tsm")}
    right = {
        m: {c: f.record["pred"] == f.record["label"] for c, f in r.clips.items()}
        for m, r in loaded.items()
    }
    expected = []
    for rule, test in RULES:  # the first clip by id of each rule, read from the clip records
        hits = sorted(c for c in right["tsm"] if test(right["tsn"][c], right["tsm"][c]))
        expected += [(rule, hits[0])] if hits else []
    assert expected
    for rule, cid in expected:
        assert f"<h3>{rule}: clip {cid}" in html
        for m in ("tsn", "tsm"):
            import base64

            png = base64.b64encode(loaded[m].clips[cid].png.read_bytes()).decode()
            assert png in html
    assert html.count("<h3>") == len(expected)
