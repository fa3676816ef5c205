"""metrics.json writing, the Markdown table and the app's lookup of the latest VID results."""

import json
import os

import numpy as np
import pytest

from detection.results import VIDResultsNotFound, format_table, latest_vid_results, write_metrics

METRICS = {
    "vid/mAP": np.float64(60.0),
    "vid/mAP_slow": 70.25,
    "vid/mAP_medium": float("nan"),
    "vid/mAP_fast": 40.0,
    "vid/mAP_corrupted": None,
    "vid/n_gt": np.int64(12),
    "vid/n_gt_fast": 3,
    "vid/AP_car": 55.5,
    "vid/AP_dog": None,
}


def test_write_metrics_is_plain_json(tmp_path):
    path = write_metrics(tmp_path / "a" / "test" / "metrics.json", METRICS)
    data = json.loads(path.read_text())
    assert data == {
        "mAP": 60.0,
        "mAP_slow": 70.25,
        "mAP_medium": None,
        "mAP_fast": 40.0,
        "mAP_corrupted": None,
        "n_gt": 12,
        "n_gt_fast": 3,
        "AP_car": 55.5,
        "AP_dog": None,
    }
    assert [p.name for p in path.parent.iterdir()] == ["metrics.json"]  # no temp file left
    with pytest.raises(TypeError, match=r"\['mAP'\] is list"):
        write_metrics(tmp_path / "b.json", {"mAP": [1]})


def test_format_table():
    table = format_table(METRICS)
    lines = table.splitlines()
    assert lines[0] == "| split | mAP (%) | GT boxes |"
    assert "| overall | 60.0 | 12 |" in lines and "| slow | 70.2 | - |" in lines
    assert "| medium | - | - |" in lines and "| fast | 40.0 | 3 |" in lines
    assert "| corrupted | - | - |" in lines
    assert "| car | 55.5 |" in lines and "| dog | - |" in lines
    assert "| car" not in format_table(METRICS, per_class=False)


def _write(runs, sub, model, value, mtime):
    path = write_metrics(
        runs / sub / model / "test" / "metrics.json",
        {"mAP": value, "mAP_fast": value / 2, "mAP_corrupted": None},
    )
    os.utime(path, (mtime, mtime))
    return path


def test_latest_vid_results_picks_newest_folder(tmp_path):
    with pytest.raises(VIDResultsNotFound, match="make demo"):
        latest_vid_results(tmp_path)
    assert issubclass(VIDResultsNotFound, FileNotFoundError)
    _write(tmp_path, "detection", "tsn", 50.0, 1000)
    _write(tmp_path, "detection", "tsm", 60.0, 1000)
    table, path = latest_vid_results(tmp_path)
    assert path == tmp_path / "detection"
    assert table == {
        "TSN": {"overall": 50.0, "slow": None, "medium": None, "fast": 25.0, "corrupted": None},
        "TSM": {"overall": 60.0, "slow": None, "medium": None, "fast": 30.0, "corrupted": None},
    }
    _write(tmp_path, "demo/detection", "tsm", 70.0, 2000)  # newer: the demo's results
    table, path = latest_vid_results(tmp_path)
    assert path == tmp_path / "demo" / "detection" and list(table) == ["TSM"]
    assert table["TSM"]["overall"] == 70.0


def test_latest_vid_results_bad_file(tmp_path):
    p = tmp_path / "detection" / "tsn" / "test" / "metrics.json"
    p.parent.mkdir(parents=True)
    p.write_text("[1, 2]")
    with pytest.raises(ValueError, match="metrics.json: expected a JSON object"):
        latest_vid_results(tmp_path)


def test_detections_dump_keeps_float32_values_exactly(tmp_path):
    import torch

    from detection.metric import DetectionsDump

    g = torch.Generator().manual_seed(0)
    boxes = torch.rand(50, 4, generator=g) * 1000
    scores = torch.rand(50, generator=g) * 1e-3  # many low scores, close together
    scores[1] = scores[0] + 1e-9  # below float32 resolution: a true tie
    dump = DetectionsDump(str(tmp_path / "results.json"))
    dump.dataset_meta = {"classes": ["car"]}
    dump.process(
        {},
        [
            {
                "img_path": "a.JPEG",
                "pred_instances": {
                    "bboxes": boxes,
                    "scores": scores,
                    "labels": torch.zeros(50, dtype=torch.long),
                },
            }
        ],
    )
    dump.evaluate(1)
    frame = json.loads((tmp_path / "results.json").read_text())["frames"][0]
    assert np.array_equal(np.float32(frame["scores"]), scores.numpy())
    assert np.array_equal(np.float32(frame["boxes"]), boxes.numpy())
    # the float64 that a VID evaluator parses keeps the float32 order of every pair
    s64, s32 = np.float64(frame["scores"]), scores.numpy()
    assert np.array_equal(np.argsort(-s64, kind="stable"), np.argsort(-s32, kind="stable"))


def test_detections_dump_writes_absolute_image_paths(tmp_path, monkeypatch):
    """A relative data_root's paths are written against the folder the test ran in, so the
    file is read the same from any other folder."""
    import torch

    from detection.metric import DetectionsDump

    monkeypatch.chdir(tmp_path)
    dump = DetectionsDump("out/results.json")
    dump.dataset_meta = {"classes": ["car"]}
    pred = {"bboxes": torch.zeros(0, 4), "scores": torch.zeros(0), "labels": torch.zeros(0)}
    rel = "data/Data/VID/val/snip/000000.JPEG"
    dump.process({}, [{"img_path": rel, "pred_instances": pred}])
    dump.evaluate(1)
    monkeypatch.chdir("/")
    frames = json.loads((tmp_path / "out" / "results.json").read_text())["frames"]
    assert frames[0]["img_path"] == str(tmp_path / rel)
