"""The demo's plan and report: what runs, what is reused, what the report says."""
import json

from ui.pipeline.demo import plan, summary
from ui.pipeline.steps import merge_timing
from ui.pipeline.report import write_report


def put(path, obj):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj))


def test_plan_stages_and_outputs(tmp_path):
    stages = plan(tmp_path)
    names = [[s.name for s in (g if isinstance(g, list) else [g])] for g in stages]
    assert names == [["synth temporal", "synth vid"], ["train tsn", "train tsm"],
                     ["test tsn", "test tsm"], ["detect train tsn", "detect train tsm"], ["detect test tsn", "detect test tsm"],
                     ["dissect tsn", "dissect tsm"], ["dissect compare"]]
    train_tsm = stages[1][1]
    assert train_tsm.args[train_tsm.args.index("--shift") + 1] == "offline"
    assert train_tsm.args[train_tsm.args.index("--output-stride") + 1] == 16
    assert train_tsm.outputs[0] == tmp_path / "recognizers" / "tsm" / "best.pth"
    assert train_tsm.env["OMP_NUM_THREADS"] == "1"
    assert not train_tsm.done()
    test_tsm = stages[2][1]  # the held-out split, scored with the checkpoint chosen on val
    assert test_tsm.args[test_tsm.args.index("--data") + 1] == tmp_path / "data" / "temporal" / "test.txt"
    assert test_tsm.args[1] == tmp_path / "recognizers" / "tsm" / "best.pth"


def test_report_tables_and_missing_sections(tmp_path):
    put(tmp_path / "recognizers" / "tsn" / "eval.json", {"top1": 20.5, "top5": 70.0})
    put(tmp_path / "recognizers" / "tsm" / "eval.json", {"top1": 95.25, "top5": 100.0})
    put(tmp_path / "recognizers" / "tsm" / "test.json", {"top1": 97.5, "top5": 99.0})
    put(tmp_path / "detection" / "tsm" / "test" / "metrics.json",
        {"mAP": 61.0, "mAP_slow": 70.0, "mAP_medium": 60.0, "mAP_fast": 50.0, "mAP_corrupted": 40.0})
    put(tmp_path / "timing.json", {"train tsm": 301.24, "synth vid": "reused"})
    md_path, html_path = write_report(tmp_path)
    md = md_path.read_text()
    assert "| TSM | 95.250 | 100.000 | 97.500 | 99.000 |" in md
    assert "| TSN | 20.500 | 70.000 |  |  |" in md  # no test.json: blank, never made up
    assert "| online-TSM R-FCN | 61.000 | 70.000 | 60.000 | 50.000 | 40.000 |" in md
    assert "missing: detection/tsn/test/metrics.json" in md
    assert "missing: dissect/tsn/metrics.json, dissect/tsm/metrics.json" in md
    assert "| train tsm | 301.2 | ran |" in md and "| synth vid |  | reused |" in md
    page = html_path.read_text()
    assert page.count("<table>") == 3 and "Plotly.newPlot" in page
    assert summary(tmp_path) == ["TSN recognizer: val top-1 20.5%", "TSM recognizer: val top-1 95.2%",
                                 "TSM recognizer: held-out test top-1 97.5%",
                                 "TSM R-FCN: mAP 61.0, mAP_slow 70.0, mAP_medium 60.0, "
                                 "mAP_fast 50.0, mAP_corrupted 40.0"]


def test_timing_keeps_the_seconds_of_reused_steps(tmp_path):
    first = merge_timing({}, {"synth": 12.5, "train": 300.0})
    assert first == {"synth": {"seconds": 12.5, "reused": False},
                     "train": {"seconds": 300.0, "reused": False}}
    again = merge_timing(first, {"synth": "reused", "train": 280.25, "new": "reused"})
    assert again == {"synth": {"seconds": 12.5, "reused": True},
                     "train": {"seconds": 280.25, "reused": False},
                     "new": {"seconds": None, "reused": True}}
    # the older format, {step: seconds or 'reused'}
    assert merge_timing({"synth": 7.0, "x": "reused"}, {"synth": "reused", "x": "reused"}) == \
        {"synth": {"seconds": 7.0, "reused": True}, "x": {"seconds": None, "reused": True}}
    put(tmp_path / "timing.json", again)
    md = write_report(tmp_path)[0].read_text()
    assert "| synth | 12.5 | reused |" in md and "| train | 280.2 | ran |" in md \
        and "| new |  | reused |" in md


def test_report_dissection_rows_with_baselines_and_chance(tmp_path):
    def agg(p):
        return {k: {"clips": 2, "pointing": p, "temporal_auc": p / 2} for k in ("method", "sanity")}

    for m, p, det in (("tsn", 0.5, 1), ("tsm", 0.75, 3)):
        a = agg(p)
        a["centre"], a["random"] = {"pointing": 0.25}, {"pointing": 0.125}
        put(tmp_path / "dissect" / m / "metrics.json", {"aggregate": a, "accuracy": p})
        put(tmp_path / "dissect" / m / "units.json", {"layers": {"layer4": {"detectors": det}}})
        put(tmp_path / "recognizers" / m / "eval.json",
            {"top1": 50.0, "top5": 90.0, "classes": ["a", "b", "c", "d"]})
    md = write_report(tmp_path)[0].read_text()
    assert "| TSM | 50.000 | 90.000 |  |  | 4 | 25.000 |" in md
    assert "| pointing | 0.500 | 0.750 | 0.250 | 0.125 | 0.500 | 0.750 |" in md
    assert "| temporal_auc | 0.250 | 0.375 |  |  | 0.250 | 0.375 |" in md
    assert "| accuracy | 0.500 | 0.750 |" in md and "| detector units layer4 | 1 | 3 |" in md
    assert "2 val clips" in md
