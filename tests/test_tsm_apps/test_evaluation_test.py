"""``tsm test``: any input form, labelled or not, class names and top-5 per video; inputs
checked before the model is built or a frame decoded."""

import json
import shutil

import pytest
import torch

from tests.test_tsm_apps.toy_videos import motion_videos, write_frame_folders
from tools.sample_videos import sample_video
from tsm_apps import build_recognizer
from tsm_apps.checkpoint.reading import save_checkpoint
from tsm_apps.cli import main

NAMES = ["rightwards", "leftwards", "c2", "c3", "c4", "c5"]


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    torch.manual_seed(0)
    model = build_recognizer("resnet18", num_classes=6, num_segments=4, width=0.125)
    path = tmp_path_factory.mktemp("ck") / "best.pth"
    save_checkpoint(path, model, meta={"classes": NAMES, "train_config": {"size": 32}})
    return path


def test_labelled_list_and_an_unlabelled_real_video(ckpt, tmp_path):
    videos, labels = motion_videos(4, frames=8, size=32)
    write_frame_folders(tmp_path, videos, labels, val_every=1)  # every clip in val.txt
    shutil.copyfile(sample_video("carphone_pristine.mp4"), tmp_path / "real.mp4")
    val = (tmp_path / "val.txt").read_text()
    (tmp_path / "mixed.txt").write_text(val + "real.mp4\n")
    out = tmp_path / "res.json"
    assert (
        main(
            [
                "test",
                str(ckpt),
                "--data",
                str(tmp_path / "mixed.txt"),
                "--out",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    res = json.loads(out.read_text())
    assert (res["videos"], res["labelled"]) == (5, 4)
    preds = res["predictions"]
    # 8 frames, 4 segments: centres int(1 + 2i); 120 frames: int(15 + 30i)
    assert preds[0]["frames"] == [[1, 3, 5, 7]] and preds[4]["frames"] == [[15, 45, 75, 105]]
    assert preds[4]["video"] == "real.mp4" and preds[4]["label"] is None
    for p in preds:
        probs = [t["prob"] for t in p["top5"]]
        assert len(probs) == 5 and probs == sorted(probs, reverse=True)
        assert all(t["name"] == NAMES[t["index"]] for t in p["top5"])
    hits = [p["top5"][0]["index"] == p["label"] for p in preds[:4]]
    assert res["top1"] == pytest.approx(100 * sum(hits) / 4)
    # the per-video hits that top-1 counts (the paired bootstrap resamples them)
    assert [p["top1_hit"] for p in preds[:4]] == hits and "top1_hit" not in preds[4]
    assert res["classes"] == NAMES


def test_folder_of_videos_gives_predictions_only(ckpt, tmp_path, capsys):
    shutil.copyfile(sample_video("carphone_distorted.mp4"), tmp_path / "a.mp4")
    assert main(["test", str(ckpt), "--data", str(tmp_path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "a.mp4: " in out and "no labels: predictions only" in out


def test_bad_checkpoint_fails_before_any_decoding(tmp_path, monkeypatch, capsys):
    import tsm_apps.data.video as video

    def no_decoding(*a, **k):
        raise AssertionError("decoded a video before checking the checkpoint")

    monkeypatch.setattr(video, "read_video_frames", no_decoding)
    bad = tmp_path / "bad.pth"
    bad.write_bytes(b"not a checkpoint")
    shutil.copyfile(sample_video("carphone_distorted.mp4"), tmp_path / "a.mp4")
    assert main(["test", str(bad), "--data", str(tmp_path / "a.mp4")]) == 2
    assert "bad.pth: not a PyTorch checkpoint" in capsys.readouterr().err
    assert main(["test", str(tmp_path / "none.pth"), "--data", str(tmp_path)]) == 2
    assert "checkpoint not found" in capsys.readouterr().err
