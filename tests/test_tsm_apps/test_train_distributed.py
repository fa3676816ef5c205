"""Distributed and resume exactness, each run in fresh processes.

Two workers are launched with ``python -m torch.distributed.run`` (the product has no spawner);
this file is also the worker script: ``python test_train_distributed.py CONFIG_JSON`` trains on
in-memory motion clips and prints the summary as JSON. ``TSM_TEST_KILL_AT_STEP=N`` makes the
worker SIGKILL itself during step ``N + 1`` (after the step's update, before any checkpoint).
"""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import torch

BASE = dict(
    arch="resnet18",
    width=0.125,
    segments=4,
    size=32,
    batch_size=8,
    lr_per_8=0.05,
    epochs=2,
    warmup_epochs=0.5,
    dropout=0.5,
    progress=False,
    tensorboard=False,
    log_every=1,
    seed=3,
)
ENV = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONUNBUFFERED="1")


def _run(cfg: dict, nproc: int = 1, env: dict | None = None, check: bool = True):
    launcher = (
        [sys.executable]
        if nproc == 1
        else [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            f"--nproc-per-node={nproc}",
            "--monitor-interval=0.5",
        ]
    )
    cmd = launcher + [__file__, json.dumps(cfg)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env or ENV)
    if check and r.returncode != 0:
        raise AssertionError(
            f"{cmd} failed ({r.returncode}):\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
        )
    return r


def _summaries(r) -> list:
    return [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]


def _step_losses(work_dir: Path) -> list:
    with open(work_dir / "metrics.csv", newline="") as f:
        return [float(row["loss"]) for row in csv.DictReader(f) if row["split"] == "train_step"]


def _train_rows(work_dir: Path) -> list:
    with open(work_dir / "metrics.csv", newline="") as f:
        return [row for row in csv.DictReader(f) if row["split"] == "train"]


def _sizes() -> tuple:
    """``(parameters, BN channels)`` of :data:`BASE`'s recognizer (2 classes)."""
    from tsm_apps import build_recognizer

    model = build_recognizer("resnet18", 2, 4, "offline", width=0.125)
    bns = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    return sum(p.numel() for p in model.parameters()), sum(b.num_features for b in bns)


def _weights(work_dir: Path, name: str = "last.pth") -> dict:
    from tsm_apps.checkpoint.reading import read_checkpoint

    return read_checkpoint(work_dir / name)["state_dict"]


def _max_diff(a: dict, b: dict, params_only: bool = False) -> float:
    buffers = ("running_mean", "running_var", "num_batches_tracked")
    keys = [k for k in a if not (params_only and k.endswith(buffers))]
    return max(float((a[k].double() - b[k].double()).abs().max()) for k in keys)


def test_two_gloo_processes_match_one_process_step_for_step(tmp_path):
    # global batch 8: 2 processes x 4 clips vs 1 process x 2 micro-batches of 4 (same BN
    # groups, same dropout masks: see Trainer.train_step). A low LR: at lr 0.05 this tiny net
    # amplifies float rounding (1e-7) about 40x per step, past 1e-4 by the fourth step.
    one = dict(BASE, work_dir=str(tmp_path / "one"), accum_steps=2, lr_per_8=0.005)
    two = dict(one, work_dir=str(tmp_path / "two"), accum_steps=1)
    s1 = _summaries(_run(one))
    s2 = _summaries(_run(two, nproc=2))
    assert [s["world_size"] for s in s1] == [1] and sorted(s["rank"] for s in s2) == [0, 1]
    l1, l2 = _step_losses(tmp_path / "one"), _step_losses(tmp_path / "two")
    assert len(l1) == len(l2) == 6  # 2 epochs x 24 clips / 8
    assert max(abs(a - b) for a, b in zip(l1, l2)) <= 1e-4
    assert l1[0] != l1[-1]  # it did train
    # parameters agree too (BN running statistics are pooled differently: not compared)
    assert _max_diff(_weights(tmp_path / "one"), _weights(tmp_path / "two"), True) <= 1e-4
    # one gradient bucket per step for this small model, plus one BN merge per epoch: 8
    # synchronisations; a step sends the float32 gradients (4 bytes a parameter), a merge two
    # float32 values a BN channel (mean, E[x^2])
    rank0 = next(s for s in s2 if s["rank"] == 0)
    assert rank0["sync_allreduce_calls"] == 6 + 2 and rank0["syncs"] == 6 + 2
    params, channels = _sizes()
    assert rank0["sync_allreduce_bytes"] == 6 * 4 * params + 2 * 8 * channels
    rows = _train_rows(tmp_path / "two")
    assert [(r["syncs"], r["sync_bytes"]) for r in rows] == [
        (str(3 + 1), str(3 * 4 * params + 8 * channels))
    ] * 2


def test_sigkill_mid_epoch_then_resume_ends_with_identical_weights(tmp_path):
    cfg = dict(BASE, epochs=2, checkpoint_every=2, work_dir=str(tmp_path / "killed"))
    full = dict(cfg, work_dir=str(tmp_path / "full"))
    _run(full)
    r = _run(cfg, env=dict(ENV, TSM_TEST_KILL_AT_STEP="4"), check=False)
    assert r.returncode == -signal.SIGKILL, r.stderr[-2000:]
    from tsm_apps.checkpoint.reading import read_checkpoint

    ck = read_checkpoint(tmp_path / "killed" / "last.pth")
    assert (ck["epoch"], ck["step_in_epoch"], ck["step"]) == (1, 1, 4)  # mid-epoch 2
    s = _summaries(_run(dict(cfg, resume=True)))[0]
    assert s["steps"] == 6 and not s["stopped"]
    assert _max_diff(_weights(tmp_path / "full"), _weights(tmp_path / "killed")) <= 1e-6
    assert _step_losses(tmp_path / "full") == _step_losses(tmp_path / "killed")
    ev = json.loads((tmp_path / "killed" / "eval.json").read_text())
    assert ev == json.loads((tmp_path / "full" / "eval.json").read_text())


def _worker(cfg_json: str) -> None:
    from tests.test_tsm_apps.toy_videos import motion_videos
    from tsm_apps.data.dataset import VideoDataset
    from tsm_apps.train import TrainConfig, train, trainer

    torch.set_num_threads(1)
    cfg = TrainConfig.from_dict(json.loads(cfg_json))
    kill_at = int(os.environ.get("TSM_TEST_KILL_AT_STEP", "0"))
    if kill_at:
        step = trainer.Trainer.train_step

        def dying_step(self, x, y):
            out = step(self, x, y)
            if self.step == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            return out

        trainer.Trainer.train_step = dying_step
    videos, labels = motion_videos(32, frames=8, size=32, seed=1)
    t, s = cfg.model.segments, cfg.data.size
    tr = VideoDataset.from_tensor(videos[:24], labels[:24], True, t, s, seed=cfg.seed)
    va = VideoDataset.from_tensor(videos[24:], labels[24:], False, t, s)
    # both ranks share the launcher's stdout pipe: one write per summary (under PIPE_BUF, so
    # atomic); print() writes the text and the newline separately, and two ranks' lines can
    # then run together
    sys.stdout.write(json.dumps(train(cfg, tr, va, 2)) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    # run as a script: sys.path[0] is this folder; the repo root makes ``tests`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    _worker(sys.argv[1])
