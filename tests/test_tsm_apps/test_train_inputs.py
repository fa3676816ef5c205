"""``tsm train`` checks its inputs before decoding a video: a bad ``--pretrained`` (unreadable,
unknown layout, missing) or a listed video that does not exist fail with exit 2 naming it."""

import pytest
import torch
import torchvision

from tests.test_tsm_apps.toy_videos import motion_videos, write_frame_folders
from tsm_apps.cli import main
from tsm_apps.train.inputs import check_pretrained


@pytest.fixture
def data(tmp_path, monkeypatch):
    videos, labels = motion_videos(4, frames=8, size=32)
    write_frame_folders(tmp_path / "data", videos, labels, val_every=2)
    import tsm_apps.data.video as video

    def no_decoding(*a, **k):
        raise AssertionError("a video was decoded before the inputs were checked")

    monkeypatch.setattr(video, "read_video_frames", no_decoding)
    return tmp_path / "data"


def _train(data, tmp_path, *extra):
    return main(
        [
            "train",
            "--data",
            str(data),
            "--out",
            str(tmp_path / "run"),
            "--epochs",
            "1",
            "--arch",
            "resnet18",
            "--segments",
            "4",
            "--size",
            "32",
            *extra,
        ]
    )


def test_unreadable_pretrained_fails_before_decoding(data, tmp_path, capsys):
    bad = tmp_path / "bad.pth"
    bad.write_bytes(b"\x00not a checkpoint")
    assert _train(data, tmp_path, "--pretrained", str(bad)) == 2
    assert "bad.pth: not a PyTorch checkpoint" in capsys.readouterr().err
    assert _train(data, tmp_path, "--pretrained", str(tmp_path / "none.pth")) == 2
    assert "--pretrained: checkpoint not found" in capsys.readouterr().err


def test_unknown_layout_is_named(data, tmp_path, capsys):
    weird = tmp_path / "weird.pth"
    torch.save({"encoder.w": torch.zeros(2)}, weird)
    assert _train(data, tmp_path, "--pretrained", str(weird)) == 2
    err = capsys.readouterr().err
    assert "--pretrained" in err and "weird.pth" in err and "unrecognised checkpoint layout" in err


def test_missing_listed_video_is_named(data, tmp_path, capsys):
    with open(data / "train.txt", "a") as f:
        f.write("frames/gone 8 1\n")
    assert _train(data, tmp_path) == 2
    assert "train.txt: video" in capsys.readouterr().err


def test_torchvision_state_dict_is_a_known_layout(tmp_path):
    path = tmp_path / "resnet18.pth"
    torch.save(torchvision.models.resnet18(weights=None).state_dict(), path)
    assert check_pretrained(str(path)) == "torchvision"


def test_tsm_train_reads_the_pretrained_tensors_once(tmp_path, monkeypatch):
    """The input checks open ``--pretrained`` with its tensors memory-mapped; the model is
    started from one full read (open_checkpoint ``into`` the model)."""
    from tsm_apps import build_recognizer
    from tsm_apps.checkpoint.reading import save_checkpoint

    videos, labels = motion_videos(4, frames=8, size=32)
    write_frame_folders(tmp_path / "data", videos, labels, val_every=2)
    torch.manual_seed(0)
    start = save_checkpoint(tmp_path / "start.pth", build_recognizer("resnet18", 2, 4))
    loads, real = [], torch.load

    def counting(f, *a, **k):
        loads.append((str(f), bool(k.get("mmap"))))
        return real(f, *a, **k)

    monkeypatch.setattr(torch, "load", counting)
    assert _train(tmp_path / "data", tmp_path, "--pretrained", str(start)) == 0
    mapped = [m for f, m in loads if f == str(start)]
    assert mapped.count(False) == 1 and len(mapped) >= 2, loads  # checked mapped, read once
