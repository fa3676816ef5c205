"""Every command that reads a checkpoint reports a bad one in exactly one line naming the file,
exit code 2, no warning and no advice to turn safe loading off — whatever the file holds."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import pytest
import torch

import detection  # noqa: F401  (imported once here: its import-time warnings are not the test's)
from tsm_apps import build_recognizer
from tsm_apps.checkpoint.reading import save_checkpoint
from tsm_apps.cli import main as tsm
from tsm_apps.io import checkpoint_format, safe_load
from tsm_apps.synth import temporal

SYNTH = str(Path(detection.__file__).parent / "configs" / "rfcn_synth_tsm.py")
KINDS = ("pickle", "nodata", "truncated", "random", "other_model")
EXPECTED = {
    "pickle": "not a PyTorch checkpoint: a plain pickle (torch.save writes a zip archive)",
    "nodata": "not a PyTorch checkpoint: a zip archive without data.pkl",
    "truncated": "a truncated or damaged zip archive, expected a PyTorch checkpoint",
    "random": "not a PyTorch checkpoint (neither a zip archive nor a pickle)",
}


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("ckpt_errors")
    temporal.generate(root / "data", videos=6, frames=8, size=32, seed=0)
    torch.manual_seed(0)
    good = save_checkpoint(
        root / "good.pth", build_recognizer("resnet18", 10, num_segments=4, width=0.125)
    )
    with open(root / "pickle.pth", "wb") as f:
        pickle.dump({"state_dict": {"fc.weight": [[0.0]]}}, f)
    with zipfile.ZipFile(root / "nodata.pth", "w") as z:
        z.writestr("archive/readme.txt", "not a checkpoint")
    data = good.read_bytes()
    (root / "truncated.pth").write_bytes(data[: len(data) // 2])
    (root / "random.pth").write_bytes(os.urandom(4096))
    # a checkpoint of another kind of model: a detector for the recognizer commands...
    torch.save(
        {
            "format": "detection.rfcn/1",
            "meta": {"config": ""},
            "state_dict": {
                "backbone.trunk.conv1.weight": torch.zeros(8, 3, 7, 7),
                "rpn_head.rpn_conv.weight": torch.zeros(8, 8, 3, 3),
            },
        },
        root / "other_model.pth",
    )
    # ... and a recognizer for the detector commands
    (root / "recognizer.pth").write_bytes(data)
    video = next((root / "data" / "videos").iterdir())
    return {"root": root, "data": root / "data", "video": video}


def _argv(command: str, ckpt: Path, f: dict) -> list:
    out = f["root"] / "out"
    return {
        "test": ["test", ckpt, "--data", f["video"]],
        "dissect": ["dissect", "run", "--checkpoint", ckpt, "--data", f["data"], "--out", out],
        "export": ["export", ckpt, "--out", out / "m.onnx"],
        "detect test": ["detect", "test", SYNTH, ckpt],
        "detect video": ["detect", "video", SYNTH, ckpt, f["video"], "--out", out / "d.json"],
        "train": [
            "train",
            "--data",
            f["data"],
            "--pretrained",
            ckpt,
            "--out",
            out / "train",
            "--epochs",
            "1",
            "--arch",
            "resnet18",
            "--segments",
            "4",
            "--size",
            "32",
        ],
    }[command]


COMMANDS = ("test", "dissect", "export", "detect test", "detect video", "train")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("command", COMMANDS)
def test_bad_checkpoint_is_one_line_exit_2(files, capfd, command, kind):
    name = "recognizer" if kind == "other_model" and command.startswith("detect") else kind
    ckpt = files["root"] / f"{name}.pth"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code = tsm([str(a) for a in _argv(command, ckpt, files)])
    out, err = capfd.readouterr()
    assert code == 2, (out, err)
    assert [str(w.message) for w in caught] == []
    lines = err.splitlines()
    assert len(lines) == 1 and err.endswith("\n"), err
    head = command.split()[0]
    assert lines[0].startswith(f"tsm {head}: error: "), lines[0]
    assert str(ckpt) in lines[0]
    assert "weights_only" not in lines[0].lower() and "weights only" not in lines[0].lower()
    if kind in EXPECTED:
        assert lines[0] == f"tsm {head}: error: {ckpt}: {EXPECTED[kind]}"


def test_safe_load_phrases_and_good_files(files, tmp_path):
    root = files["root"]
    for kind, phrase in EXPECTED.items():
        assert checkpoint_format(root / f"{kind}.pth") == phrase
        with pytest.raises(ValueError) as e:
            safe_load(root / f"{kind}.pth")
        assert str(e.value) == f"{root / kind}.pth: {phrase}"
    (tmp_path / "empty.pth").touch()
    with pytest.raises(ValueError, match=r"empty\.pth: not a PyTorch checkpoint: an empty file$"):
        safe_load(tmp_path / "empty.pth")
    with pytest.raises(ValueError, match=r"folder: a folder, expected a checkpoint file$"):
        safe_load(_folder(tmp_path))
    sd = {"w": torch.arange(6.0)}
    torch.save(sd, tmp_path / "legacy.pth", _use_new_zipfile_serialization=False)
    torch.save(sd, tmp_path / "zip.pth")
    for name in ("legacy.pth", "zip.pth"):
        assert torch.equal(safe_load(tmp_path / name)["w"], sd["w"])
    assert torch.equal(safe_load(tmp_path / "zip.pth", mmap=True)["w"], sd["w"])
    data = (tmp_path / "legacy.pth").read_bytes()
    (tmp_path / "legacy_cut.pth").write_bytes(data[:-20])
    with pytest.raises(
        ValueError,
        match=r"legacy_cut\.pth: a truncated or damaged PyTorch "
        r"checkpoint$",
    ):
        safe_load(tmp_path / "legacy_cut.pth")


def _folder(tmp_path: Path) -> Path:
    (tmp_path / "folder").mkdir()
    return tmp_path / "folder"


def test_plain_pickle_in_a_fresh_process_prints_one_line(files):
    """The whole stderr of ``tsm test junk.pth`` in its own interpreter (torch's own warning
    filters, no pytest capture): one line, no UserWarning."""
    ckpt = files["root"] / "pickle.pth"
    run = subprocess.run(
        [sys.executable, "-m", "tsm_apps.cli", "test", str(ckpt), "--data", str(files["video"])],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 2
    assert run.stderr == f"tsm test: error: {ckpt}: {EXPECTED['pickle']}\n"


def test_a_recognizer_of_another_width_is_one_line_too(files, capfd):
    """``tsm train --pretrained`` with a checkpoint of the same architecture at another width:
    every mismatching tensor is named, on one line."""
    ckpt = files["root"] / "good.pth"  # ResNet-18 at width 1/8; the command builds width 1
    code = tsm([str(a) for a in _argv("train", ckpt, files)])
    err = capfd.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("tsm train")]
    assert code == 2 and len(lines) == 1 and err.endswith(lines[0] + "\n"), err
    assert lines[0].startswith(
        f"tsm train: error: checkpoint {ckpt} (tsm_apps layout) vs the "
        "requested model (arch=resnet18, num_classes=10) does not match "
        "the model: shape conflicts ("
    )
