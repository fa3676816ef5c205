"""Discovery and parsing of the plain files in a runs folder."""

from __future__ import annotations

import json

import pytest

from ui.app.sources import runs_folder as runs


def test_find_videos_and_snippets(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    for name in ("a/x.mp4", "a/b/y.AVI", "a/notes.txt", ".hidden/z.mp4"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"")
    snip = tmp_path / "vid" / "Data" / "VID" / "val" / "snip_0"
    snip.mkdir(parents=True)
    (snip / "000000.JPEG").write_bytes(b"")
    train = tmp_path / "vid" / "Data" / "VID" / "train" / "t0"
    train.mkdir(parents=True)
    (train / "000000.JPEG").write_bytes(b"")
    assert runs.find_videos(tmp_path) == [tmp_path / "a/b/y.AVI", tmp_path / "a/x.mp4"]
    assert runs.find_vid_snippets(tmp_path) == [snip]


def test_read_metrics_csv(tmp_path):
    p = tmp_path / "metrics.csv"
    p.write_text("epoch,step,split,loss,top1\n0,10,train,2.5,\n0,10,val,2.0,40\n")
    df = runs.read_metrics_csv(p)
    assert df["step"].tolist() == [10.0, 10.0] and df["split"].tolist() == ["train", "val"]
    assert df["loss"].tolist() == [2.5, 2.0]
    assert df["top1"].isna().tolist() == [True, False] and df["top1"][1] == 40.0
    p.write_text("epoch,loss\n0,1\n1,abc\n")
    with pytest.raises(ValueError, match=r"metrics.csv:3: column 'loss' holds 'abc'"):
        runs.read_metrics_csv(p)


def test_read_bench_json_report_and_list(tmp_path):
    p = tmp_path / "bench.json"
    p.write_text(
        json.dumps(
            {
                "machine": {"cpus": 2},
                "figures": [
                    {
                        "name": "shift overhead",
                        "value": 1.02,
                        "unit": "x",
                        "goal": "<1.05",
                        "detail": {"a": 1},
                    }
                ],
            }
        )
    )
    rows, meta = runs.read_bench_json(p)
    assert rows == [
        {
            "name": "shift overhead",
            "value": 1.02,
            "unit": "x",
            "goal": "<1.05",
            "detail": '{"a": 1}',
        }
    ]
    assert meta == {"machine": {"cpus": 2}}
    p.write_text(json.dumps([{"name": "n", "value": 3}]))
    assert runs.read_bench_json(p) == ([{"name": "n", "value": 3}], {})
    p.write_text(json.dumps([{"value": 3}]))
    with pytest.raises(ValueError, match="row 0 lacks 'name'"):
        runs.read_bench_json(p)


def test_find_files_newest_first(tmp_path):
    import os

    for i, d in enumerate(("old", "new")):
        f = tmp_path / d / "bench.json"
        f.parent.mkdir()
        f.write_text("[]")
        os.utime(f, (1000 + i, 1000 + i))
    assert runs.find_files(tmp_path, "bench.json") == [
        tmp_path / "new/bench.json",
        tmp_path / "old/bench.json",
    ]


def test_find_checkpoints_leaves_detector_folders_out(tmp_path):
    for rel in (
        "train/tsm/best.pth",
        "train/tsn/best.pth",
        "detection/tsm/final.pth",
        "a/.hidden/x.pth",
        "notes.txt",
    ):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(b"")
    (tmp_path / "detection" / "tsm" / "config.py").write_text("")
    assert runs.find_checkpoints(tmp_path) == [
        tmp_path / "train/tsm/best.pth",
        tmp_path / "train/tsn/best.pth",
    ]


def test_the_model_lists_follow_no_link_out_of_the_runs_folder(tmp_path):
    """The runs folder's lists (checkpoints, videos, snippets, run files, detectors) are
    confined like typed paths: a link that points out of the folder is neither listed nor
    walked into; a link that stays inside is listed."""
    from ui.app.sources.detection import find_detectors

    root, outside = tmp_path / "runs", tmp_path / "outside"
    for rel in ("train/tsm/best.pth", "videos/a.mp4", "d/run.json"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(b"x")
    for rel in ("secret.pth", "clip.mp4", "run.json", "det/final.pth", "det/config.py"):
        (outside / rel).parent.mkdir(parents=True, exist_ok=True)
        (outside / rel).write_bytes(b"x")
    (root / "escape_file.pth").symlink_to("/etc/passwd")
    (root / "escape_model.pth").symlink_to(outside / "secret.pth")
    (root / "videos" / "escape.mp4").symlink_to(outside / "clip.mp4")
    (root / "escape_dir").symlink_to(outside)  # a folder link out: nothing under it listed
    (root / "inside.pth").symlink_to(root / "train" / "tsm" / "best.pth")
    (root / "detection").mkdir()
    (root / "detection" / "tsm").symlink_to(outside / "det")
    (root / "detection" / "tsn").mkdir()
    (root / "detection" / "tsn" / "final.pth").symlink_to(outside / "det" / "final.pth")
    assert runs.find_checkpoints(root) == [root / "inside.pth", root / "train/tsm/best.pth"]
    assert runs.find_videos(root) == [root / "videos/a.mp4"]
    assert runs.find_files(root, "run.json") == [root / "d/run.json"]
    assert find_detectors(root) == {}
    assert runs.within(root / "inside.pth", root) and not runs.within(root / "escape_dir", root)
