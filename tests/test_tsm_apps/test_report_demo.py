"""The demo's plan and report: what runs, what is reused, what the report says."""
import json

from tsm_apps.demo import plan, summary
from tsm_apps.report import write_report


def put(path, obj):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj))


def test_plan_stages_and_outputs(tmp_path):
    stages = plan(tmp_path)
    names = [[s.name for s in (g if isinstance(g, list) else [g])] for g in stages]
    assert names == [["synth temporal", "synth vid"], ["train tsn", "train tsm"],
                     ["detect train tsn", "detect train tsm"], ["detect test tsn", "detect test tsm"],
                     ["dissect tsn", "dissect tsm"], ["dissect compare"]]
    train_tsm = stages[1][1]
    assert train_tsm.args[train_tsm.args.index("--shift") + 1] == "offline"
    assert train_tsm.outputs[0] == tmp_path / "recognizers" / "tsm" / "best.pth"
    assert train_tsm.env["OMP_NUM_THREADS"] == "1"
    assert not train_tsm.done()


def test_report_tables_and_missing_sections(tmp_path):
    put(tmp_path / "recognizers" / "tsn" / "eval.json", {"top1": 20.5, "top5": 70.0})
    put(tmp_path / "recognizers" / "tsm" / "eval.json", {"top1": 95.25, "top5": 100.0})
    put(tmp_path / "detection" / "tsm" / "test" / "metrics.json",
        {"mAP": 61.0, "mAP_slow": 70.0, "mAP_medium": 60.0, "mAP_fast": 50.0, "mAP_corrupted": 40.0})
    put(tmp_path / "timing.json", {"train tsm": 301.24, "synth vid": "reused"})
    md_path, html_path = write_report(tmp_path)
    md = md_path.read_text()
    assert "| TSM | 95.250 | 100.000 |" in md and "| TSN | 20.500 | 70.000 |" in md
    assert "| online-TSM R-FCN | 61.000 | 70.000 | 60.000 | 50.000 | 40.000 |" in md
    assert "missing: detection/tsn/test/metrics.json" in md
    assert "missing: dissect/tsn/metrics.json, dissect/tsm/metrics.json" in md
    assert "| train tsm | 301.2 |" in md and "| synth vid | reused |" in md
    page = html_path.read_text()
    assert page.count("<table>") == 3 and "Plotly.newPlot" in page
    assert summary(tmp_path) == ["TSN recognizer: val top-1 20.5%", "TSM recognizer: val top-1 95.2%",
                                 "TSM R-FCN: mAP 61.0, mAP_slow 70.0, mAP_medium 60.0, "
                                 "mAP_fast 50.0, mAP_corrupted 40.0"]
