"""``tsm detect train`` / ``test`` end to end on a tiny synthetic VID set (``tsm synth vid`` at
64x64): one iteration of the small synthetic config, resume from its checkpoint under torch's
``weights_only=True`` default, then the VID evaluation with ``metrics.json`` and
``results.json``."""

import json
from pathlib import Path

import pytest
import torch

import detection
from detection.checkpoint import read_detector_checkpoint
from tsm_apps.cli import main as tsm
from tsm_apps.synth.vid import generate

SYNTH = str(Path(detection.__file__).parent / "configs" / "rfcn_synth_tsm.py")


def options(root, iters):
    return [
        "--cfg-options",
        f"data_root={root}/",
        f"train_cfg.max_iters={iters}",
        "default_hooks.checkpoint.interval=1",
        "train_dataloader.batch_size=1",
    ]


@pytest.mark.slow
def test_train_resume_test(tmp_path):
    root = generate(tmp_path / "vid", train_videos=2, val_videos=1, frames=12, width=64, height=64)
    work = tmp_path / "work"
    assert tsm(["detect", "train", SYNTH, "--work-dir", str(work), *options(root, 1)]) == 0
    assert (work / "config.py").is_file() and (work / "iter_1.pth").is_file()
    assert read_detector_checkpoint(work / "final.pth")["meta"]["iter"] == 1
    # mmengine's own checkpoint is plain data (no HistoryBuffer/numpy pickles) ...
    ckpt = torch.load(work / "iter_1.pth", weights_only=True)
    assert ckpt["message_hub"]["log_scalars"]["train/loss"]["__history_buffer__"] == 1

    # ... and resuming from it works, continuing at iteration 1 with the loss history
    assert (
        tsm(["detect", "train", SYNTH, "--work-dir", str(work), "--resume", *options(root, 2)]) == 0
    )
    assert read_detector_checkpoint(work / "final.pth")["meta"]["iter"] == 2
    logs = "".join(p.read_text() for p in work.glob("*/*.log"))
    assert "resumed epoch: 0, iter: 1" in logs and "just skip resuming" not in logs

    out = work / "test" / "results.json"
    assert (
        tsm(
            [
                "detect",
                "test",
                SYNTH,
                str(work / "final.pth"),
                "--out",
                str(out),
                "--cfg-options",
                f"data_root={root}/",
            ]
        )
        == 0
    )
    metrics = json.loads((out.parent / "metrics.json").read_text())
    assert {"mAP", "mAP_slow", "mAP_medium", "mAP_fast", "mAP_corrupted"} <= set(metrics)
    assert metrics["n_frames"] == 12 and metrics["n_gt"] > 0
    dets = json.loads(out.read_text())
    assert len(dets["frames"]) == 12
    assert dets["classes"] == ["airplane", "car", "zebra", "watercraft"]
    assert all(len(f["boxes"]) == len(f["scores"]) == len(f["labels"]) for f in dets["frames"])
