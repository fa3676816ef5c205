"""``tsm detect``: bad input ends with exit code 2 and a one-line message naming the problem."""

from pathlib import Path

import pytest

import detection
from tsm_apps.cli import main as tsm

SYNTH = str(Path(detection.__file__).parent / "configs" / "rfcn_synth_tsm.py")


def run(capsys, *argv):
    code = tsm(["detect", *map(str, argv)])
    err = capsys.readouterr().err
    return code, err


def test_missing_config(capsys, tmp_path):
    code, err = run(capsys, "train", tmp_path / "nope.py", "--work-dir", tmp_path / "w")
    assert code == 2
    assert "config not found" in err and "nope.py" in err and "Traceback" not in err


def test_missing_and_bad_checkpoint(capsys, tmp_path):
    code, err = run(capsys, "test", SYNTH, tmp_path / "none.pth")
    assert code == 2 and "checkpoint not found" in err and "none.pth" in err
    bad = tmp_path / "bad.pth"
    bad.write_bytes(b"not a checkpoint")
    code, err = run(capsys, "test", SYNTH, bad)
    assert code == 2 and "bad.pth: not a PyTorch checkpoint" in err
    assert "Traceback" not in err


def test_unreadable_video(capsys, tmp_path):
    video = tmp_path / "broken.mp4"
    video.write_bytes(b"\x00\x00\x00\x18ftypmp42" + b"garbage" * 20)
    code, err = run(capsys, "video", SYNTH, tmp_path / "x.pth", video, "--out", tmp_path / "d.json")
    assert code == 2 and "broken.mp4" in err and "Traceback" not in err
    code, err = run(
        capsys,
        "video",
        SYNTH,
        tmp_path / "x.pth",
        tmp_path / "missing.mp4",
        "--out",
        tmp_path / "d.json",
    )
    assert code == 2 and "video not found" in err


def test_bad_cfg_option_and_usage(capsys, tmp_path):
    with pytest.raises(SystemExit) as e:
        tsm(["detect", "train"])
    assert e.value.code == 2
    code, err = run(capsys, "test", SYNTH, tmp_path / "none.pth", "--out", tmp_path / "r.txt")
    assert code == 2 and "--out must be a .json file" in err


def test_train_names_fgfas_rule_for_another_batch(capsys, tmp_path, monkeypatch):
    """One process x 1 clip with the paper config (made for 4 x 1): the note gives FGFA's
    values for a batch of 1 (222,946 entries per epoch, x2 epochs; int(1.333 * 222,946)), then
    the run stops at the missing backbone weights."""
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    paper = Path(detection.__file__).parent / "configs" / "rfcn_r101_vid_tsm_online.py"
    code, err = run(capsys, "train", paper, "--work-dir", tmp_path / "w")
    assert code == 2 and "no backbone checkpoint" in err
    assert (
        "this run has 1 x 1 = 1; FGFA's rule for it (detection/schedule.py): lr 0.00025, "
        "weight decay 0.0005, 445892 iterations, LR step at [297187]"
    ) in err
