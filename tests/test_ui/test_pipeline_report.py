"""The demo's plan and report: what runs, what is reused, what the report says."""

import json

from ui.pipeline.demo import summary
from ui.pipeline.plan import plan
from ui.pipeline.report import write_report
from ui.pipeline.steps import merge_timing


def put(path, obj):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj))


def test_plan_steps_needs_and_outputs(tmp_path):
    steps = {s.name: s for s in plan(tmp_path, seed=5, seeds=2)}
    per_seed = ["train {}", "test {}", "dissect {}", "detect train {}", "detect test {}"]
    assert sorted(steps) == sorted(
        ["synth temporal", "synth vid", "dissect compare"]
        + [f.format(m) + tag for f in per_seed for m in ("tsn", "tsm") for tag in ("", " (seed 6)")]
    )
    train_tsm, other = steps["train tsm"], steps["train tsm (seed 6)"]
    assert train_tsm.args[train_tsm.args.index("--shift") + 1] == "offline"
    assert train_tsm.args[train_tsm.args.index("--output-stride") + 1] == 16
    assert train_tsm.args[train_tsm.args.index("--seed") + 1] == 5
    assert other.args[other.args.index("--seed") + 1] == 6
    assert train_tsm.outputs[0] == tmp_path / "recognizers" / "tsm" / "best.pth"
    assert other.outputs[0] == tmp_path / "seeds" / "6" / "recognizers" / "tsm" / "best.pth"
    assert other.args[other.args.index("--data") + 1] == tmp_path / "data" / "temporal"
    assert train_tsm.env["OMP_NUM_THREADS"] == "1" and train_tsm.needs == ["synth temporal"]
    assert not train_tsm.done()
    test_tsm = steps["test tsm"]  # the held-out split, scored with the checkpoint chosen on val
    assert (
        test_tsm.args[test_tsm.args.index("--data") + 1]
        == tmp_path / "data" / "temporal" / "test.txt"
    )
    assert test_tsm.args[1] == tmp_path / "recognizers" / "tsm" / "best.pth"
    for name in ("dissect tsm", "dissect tsn (seed 6)"):  # dissection on the held-out clips too
        d = steps[name]
        assert d.args[d.args.index("--data") + 1] == tmp_path / "data" / "temporal" / "test.txt"
    assert (
        "--no-units" in steps["dissect tsn (seed 6)"].args
        and "--no-units" not in steps["dissect tsn"].args
    )
    # the app opens the newest dissection of each model: the first seed's start last
    assert set(steps["dissect tsm"].needs) >= {"dissect tsn (seed 6)", "dissect tsm (seed 6)"}
    det = steps["detect train tsn (seed 6)"]  # detectors: seeds apart from those that chose
    assert "randomness.seed=10" in det.args and det.needs == ["synth vid"]  # their setting
    assert det.outputs == [tmp_path / "seeds" / "6" / "detection" / "tsn" / "final.pth"]
    assert (
        "test_dataloader.dataset.ann_file=ImageSets/VID/test.txt" in steps["detect test tsm"].args
    )  # scored on the held-out snippets
    vid = steps["synth vid"]
    assert (
        vid.args[vid.args.index("--val-videos") + 1] == 16
        and vid.args[vid.args.index("--seed") + 1] == 5
    )


def test_demo_recognizers_are_scored_on_whole_frames():
    """The demo's 112x112 clips are seen whole at validation and test (the protocol recorded in
    the checkpoints, which tsm test, tsm dissect run and the app follow), not resized to 128
    and centre-cropped."""
    from tsm_apps.train.config import load_config

    proto = load_config(preset="synthetic").test_protocol()
    assert (proto.scale_size, proto.crop_size, proto.crops) == (112, 112, 1)


def test_plan_extras_online_tsm_early_recognition_and_bench_last(tmp_path):
    assert not any(s.name in ("bench", "early recognition") for s in plan(tmp_path))
    steps = plan(tmp_path, seeds=1, extras=True)
    names = [s.name for s in steps]
    early, bench = steps[names.index("early recognition")], steps[-1]
    assert early.outputs == [tmp_path / "early" / "early.csv"]
    assert (
        early.args[early.args.index("--offline-checkpoint") + 1]
        == tmp_path / "recognizers" / "tsm" / "best.pth"
    )
    assert early.args[1] == tmp_path / "recognizers" / "tsm_online" / "best.pth"
    online = steps[names.index("train tsm online")]
    assert online.args[online.args.index("--shift") + 1] == "online"
    assert bench.name == "bench" and set(bench.needs) == set(names[:-1])  # alone, at the end
    assert bench.outputs == [tmp_path / "bench" / "bench.json"]


def test_report_tables_and_missing_sections(tmp_path):
    put(tmp_path / "recognizers" / "tsn" / "eval.json", {"top1": 20.5, "top5": 70.0})
    put(tmp_path / "recognizers" / "tsm" / "eval.json", {"top1": 95.25, "top5": 100.0})
    put(tmp_path / "recognizers" / "tsm" / "test.json", {"top1": 97.5, "top5": 99.0})
    put(
        tmp_path / "detection" / "tsm" / "test" / "metrics.json",
        {
            "mAP": 61.0,
            "mAP_slow": 70.0,
            "mAP_medium": 60.0,
            "mAP_fast": 50.0,
            "mAP_corrupted": 40.0,
        },
    )
    put(tmp_path / "timing.json", {"train tsm": 301.24, "synth vid": "reused"})
    md_path, html_path = write_report(tmp_path)
    md = md_path.read_text()
    assert "| TSM | 95.250 | 100.000 | 97.500 | 99.000 |" in md
    assert "| TSN | 20.500 | 70.000 |  |  |" in md  # no test.json: blank, never made up
    assert "| online-TSM R-FCN | 61.000 | 70.000 | 60.000 | 50.000 | 40.000 |" in md
    assert "missing: detection/tsn/test/metrics.json" in md
    assert "missing: dissect/tsn/metrics.json, dissect/tsm/metrics.json" in md
    assert "| train tsm | 301.2 |  | ran |" in md and "| synth vid |  |  | reused |" in md
    page = html_path.read_text()
    assert page.count("<table>") == 3 and "Plotly.newPlot" in page
    assert summary(tmp_path) == []  # no comparison has both models' figure
    assert "no comparison yet" in md


def test_timing_keeps_the_seconds_of_reused_steps(tmp_path):
    first = merge_timing(
        {},
        {
            "synth": {"seconds": 12.5, "cpu_seconds": 11.0},
            "train": {"seconds": 300.0, "cpu_seconds": 290.5},
        },
    )
    assert first == {
        "synth": {"seconds": 12.5, "cpu_seconds": 11.0, "reused": False},
        "train": {"seconds": 300.0, "cpu_seconds": 290.5, "reused": False},
    }
    again = merge_timing(
        first,
        {"synth": "reused", "train": {"seconds": 280.25, "cpu_seconds": 270.0}, "new": "reused"},
    )
    assert again == {
        "synth": {"seconds": 12.5, "cpu_seconds": 11.0, "reused": True},
        "train": {"seconds": 280.25, "cpu_seconds": 270.0, "reused": False},
        "new": {"seconds": None, "cpu_seconds": None, "reused": True},
    }
    # the older formats, {step: seconds or 'reused'} and no CPU seconds
    assert merge_timing(
        {"synth": 7.0, "x": "reused", "y": {"seconds": 3.0, "reused": False}},
        {"synth": "reused", "x": "reused", "y": "reused"},
    ) == {
        "synth": {"seconds": 7.0, "cpu_seconds": None, "reused": True},
        "x": {"seconds": None, "cpu_seconds": None, "reused": True},
        "y": {"seconds": 3.0, "cpu_seconds": None, "reused": True},
    }
    put(tmp_path / "timing.json", again)
    md = write_report(tmp_path)[0].read_text()
    assert (
        "| synth | 12.5 | 11.0 | reused |" in md
        and "| train | 280.2 | 270.0 | ran |" in md
        and "| new |  |  | reused |" in md
    )
    again["demo"] = {
        "seconds": 1500.0,
        "cpu_seconds": 2900.5,
        "reused": False,
        "cpus": 2,
        "cpu": "AMD EPYC",
        "load": 0.25,
        "load_after": 1.5,
    }
    put(tmp_path / "timing.json", again)
    md = write_report(tmp_path)[0].read_text()
    assert "| demo | 1500.0 | 2900.5 | ran |" in md
    assert "demo: 2 CPUs (AMD EPYC), load average 0.25 before and 1.50 after" in md


def test_report_dissection_rows_with_baselines_and_chance(tmp_path):
    def agg(p):
        return {k: {"clips": 2, "pointing": p, "temporal_auc": p / 2} for k in ("method", "sanity")}

    for m, p, det in (("tsn", 0.5, 1), ("tsm", 0.75, 3)):
        a = agg(p)
        a["centre"], a["random"] = {"pointing": 0.25}, {"pointing": 0.125}
        put(tmp_path / "dissect" / m / "metrics.json", {"aggregate": a, "accuracy": p})
        put(tmp_path / "dissect" / m / "units.json", {"layers": {"layer4": {"detectors": det}}})
        put(tmp_path / "dissect" / m / "run.json", {"settings": {"data": "/x/temporal/test.txt"}})
        put(
            tmp_path / "recognizers" / m / "eval.json",
            {"top1": 50.0, "top5": 90.0, "classes": ["a", "b", "c", "d"]},
        )
    md = write_report(tmp_path)[0].read_text()
    assert "| TSM | 50.000 | 90.000 |  |  | 4 | 25.000 |" in md
    assert "| pointing | 0.500 | 0.750 | 0.250 | 0.125 | 0.500 | 0.750 |" in md
    assert "| temporal_auc | 0.250 | 0.375 |  |  | 0.250 | 0.375 |" in md
    assert "| accuracy | 0.500 | 0.750 |" in md and "| detector units layer4 | 1 | 3 |" in md
    assert "2 clips of test.txt, CAM" in md
