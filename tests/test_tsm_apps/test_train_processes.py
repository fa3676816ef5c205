"""Process-level paths the README promises, each run in real processes: a SIGTERM mid-epoch,
K-step averaging over gloo, a torchrun elastic restart after a killed worker (the launch
variables and the attempt store they rely on: ``test_distributed.py``).

This file is also the worker script: ``python test_train_processes.py train CONFIG_JSON`` trains
like the worker of ``test_train_distributed.py``; ``TSM_TEST_SIGNAL_AT_STEP=N`` with
``TSM_TEST_SIGNAL=TERM|KILL`` (and ``TSM_TEST_SIGNAL_RANK``) makes that rank signal itself in
step ``N + 1``, only in torchrun attempt ``TSM_TEST_SIGNAL_ATTEMPT`` when that is set
(``TORCHELASTIC_RESTART_COUNT``); in a restarted attempt, rank ``TSM_TEST_RESTART_DELAY_RANK``
starts 2 s late; the printed summary adds ``restart`` and ``steps_run`` (steps this process
trained). ``python test_train_processes.py kavg OUT``
runs K-step averaging rounds on this rank and saves the packed state.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_train_distributed import (  # noqa: E402
    BASE,
    ENV,
    _max_diff,
    _sizes,
    _step_losses,
    _summaries,
    _train_rows,
    _weights,
)
from tsm_apps.distributed import env_from  # noqa: E402
from tsm_apps.train.averaging import KStepAverager, pack  # noqa: E402

TORCHRUN = [
    sys.executable,
    "-m",
    "torch.distributed.run",
    "--standalone",
    "--nproc-per-node=2",
    "--monitor-interval=0.5",
]


def _run(args: list, launcher: list | None = None, env: dict | None = None, check: bool = True):
    cmd = (launcher or [sys.executable]) + [__file__] + args
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env or ENV)
    if check and r.returncode != 0:
        raise AssertionError(
            f"{cmd} failed ({r.returncode}):\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
        )
    return r


@pytest.mark.slow
def test_sigterm_mid_epoch_saves_a_checkpoint_that_resumes_exactly(tmp_path):
    cfg = dict(BASE, work_dir=str(tmp_path / "term"))
    full = dict(cfg, work_dir=str(tmp_path / "full"))
    _run(["train", json.dumps(full)])
    r = _run(
        ["train", json.dumps(cfg)],
        env=dict(ENV, TSM_TEST_SIGNAL_AT_STEP="4", TSM_TEST_SIGNAL="TERM"),
    )
    s = _summaries(r)[0]
    assert s["stopped"] and s["signal"] == signal.SIGTERM and s["steps"] == 5
    from tsm_apps.checkpoint.reading import read_checkpoint

    ck = read_checkpoint(tmp_path / "term" / "last.pth")
    assert (ck["epoch"], ck["step_in_epoch"], ck["step"]) == (1, 2, 5)  # mid-epoch 2 of 3 steps
    s = _summaries(_run(["train", json.dumps(dict(cfg, resume=True))]))[0]
    assert s["steps"] == 6 and not s["stopped"]
    assert _max_diff(_weights(tmp_path / "full"), _weights(tmp_path / "term")) <= 1e-6
    assert _step_losses(tmp_path / "full") == _step_losses(tmp_path / "term")


@pytest.mark.slow
def test_torchrun_restarts_a_killed_worker_and_it_resumes_from_the_last_checkpoint(tmp_path):
    # rank 1 SIGKILLs itself in step 5 of attempt 0 (last.pth holds step 4: checkpoint_every=2);
    # torchrun stops rank 0, restarts both, and `resume` continues from step 4. In attempt 1
    # rank 1 starts 2 s late, so rank 0 reads the group's keys first: without a namespace per
    # attempt (distributed.attempt_store) it would read rank 1's gloo address from attempt 0
    # and fail in connectFullMesh ("Connection refused")
    cfg = dict(BASE, checkpoint_every=2, resume=True, work_dir=str(tmp_path / "elastic"))
    full = dict(cfg, work_dir=str(tmp_path / "full"))
    s_full = _summaries(_run(["train", json.dumps(full)], TORCHRUN))
    assert sorted((s["restart"], s["steps_run"]) for s in s_full) == [(0, 6), (0, 6)]
    r = _run(
        ["train", json.dumps(cfg)],
        TORCHRUN + ["--max-restarts=1"],
        env=dict(
            ENV,
            TSM_TEST_SIGNAL_AT_STEP="4",
            TSM_TEST_SIGNAL="KILL",
            TSM_TEST_SIGNAL_RANK="1",
            TSM_TEST_SIGNAL_ATTEMPT="0",
            TSM_TEST_RESTART_DELAY_RANK="1",
        ),
    )
    s = _summaries(r)  # attempt 0 printed nothing: rank 1 was killed, rank 0 failed
    assert sorted((x["rank"], x["restart"], x["steps_run"], x["steps"]) for x in s) == [
        (0, 1, 2, 6),
        (1, 1, 2, 6),
    ], r.stderr[-3000:]
    assert "connectFullMesh" not in r.stderr
    assert _max_diff(_weights(tmp_path / "full"), _weights(tmp_path / "elastic")) <= 1e-6
    assert _step_losses(tmp_path / "full") == _step_losses(tmp_path / "elastic")


@pytest.mark.slow
def test_k_step_averaging_run_counts_rounds_and_their_float32_bytes(tmp_path):
    # 2 processes x 4 clips, 24 clips: 3 steps an epoch; k=2 averages after steps 2 and 3 (the
    # epoch's end), so 2 synchronisations an epoch, one all-reduce each, and no BN merge. A round
    # sends in float32 the parameters, 2 values a BN channel and SGD's momentum (one a
    # parameter): 4 x (P + 2 C + P) bytes. (DDP on the same run: test_train_distributed.py.)
    cfg = dict(BASE, work_dir=str(tmp_path / "kavg"), averaging={"method": "kavg", "k": 2})
    s = next(x for x in _summaries(_run(["train", json.dumps(cfg)], TORCHRUN)) if x["rank"] == 0)
    params, channels = _sizes()
    assert (s["steps"], s["syncs"], s["sync_allreduce_calls"]) == (6, 4, 4)
    assert s["sync_allreduce_bytes"] == 4 * 4 * (2 * params + 2 * channels)
    assert [(r["syncs"], r["sync_bytes"]) for r in _train_rows(tmp_path / "kavg")] == [
        ("2", str(2 * 4 * (2 * params + 2 * channels)))
    ] * 2


def _kavg_worker(rank: int, all_reduce_mean, rounds: int = 3, k: int = 2) -> torch.Tensor:
    """A tiny conv+BN net with Adam, ``rounds`` x ``k`` local steps on this rank's data, the
    averager closing each round; returns the packed (params, BN, Adam moments) state."""
    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3),
        torch.nn.BatchNorm2d(4),
        torch.nn.Flatten(),
        torch.nn.Linear(4 * 4 * 4, 2),
    )
    g = torch.Generator().manual_seed(100 + rank)  # no global RNG: the simulation runs threads
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(0.3 * torch.randn(p.shape, generator=g))
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    avg = KStepAverager(net, opt, k, all_reduce_mean)
    for step in range(1, rounds * k + 1):
        x, y = torch.randn(4, 3, 6, 6, generator=g), torch.randint(0, 2, (4,), generator=g)
        opt.zero_grad()
        torch.nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
        avg.after_step(step, False)
    assert avg.rounds == rounds
    return pack(net, opt)


@pytest.mark.slow
def test_k_step_averaging_in_two_gloo_processes_equals_the_simulated_all_reduce(tmp_path):
    _run(["kavg", str(tmp_path)], TORCHRUN)
    got = [torch.load(tmp_path / f"rank{r}.pt", weights_only=True) for r in (0, 1)]
    assert torch.equal(got[0], got[1])  # one model after every round
    # simulated: run both workers step by step, the all-reduce is the mean of their packs
    import threading

    packs, barrier, lock = {}, threading.Barrier(2), threading.Lock()
    results = {}

    def mean_of_both(rank):
        def reduce(flat):
            with lock:
                packs[rank] = flat.clone()
            barrier.wait()
            out = (packs[0] + packs[1]) / 2
            barrier.wait()
            return out

        return reduce

    torch.set_num_threads(1)
    threads = [
        threading.Thread(
            target=lambda r=r: results.__setitem__(r, _kavg_worker(r, mean_of_both(r)))
        )
        for r in (0, 1)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert torch.equal(results[0], results[1])
    assert (got[0] - results[0]).abs().max().item() <= 1e-6


def _train_worker(cfg_json: str) -> None:
    from tests.test_tsm_apps.toy_videos import motion_videos
    from tsm_apps.data.dataset import VideoDataset
    from tsm_apps.train import TrainConfig, train, trainer

    torch.set_num_threads(1)
    cfg = TrainConfig.from_dict(json.loads(cfg_json))
    at = int(os.environ.get("TSM_TEST_SIGNAL_AT_STEP", "0"))
    rank_ok = os.environ.get("RANK", "0") == os.environ.get("TSM_TEST_SIGNAL_RANK", "0")
    restart = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
    attempt_ok = os.environ.get("TSM_TEST_SIGNAL_ATTEMPT", restart) == restart
    sig = getattr(signal, "SIG" + os.environ["TSM_TEST_SIGNAL"]) if at else None
    step, steps_run = trainer.Trainer.train_step, [0]

    def counted_step(self, x, y):
        out = step(self, x, y)
        steps_run[0] += 1
        if at and rank_ok and attempt_ok and self.step == at:
            os.kill(os.getpid(), sig)
        return out

    trainer.Trainer.train_step = counted_step
    if restart != "0" and os.environ.get("RANK") == os.environ.get("TSM_TEST_RESTART_DELAY_RANK"):
        time.sleep(2)
    videos, labels = motion_videos(32, frames=8, size=32, seed=1)
    t, s = cfg.model.segments, cfg.data.size
    tr = VideoDataset.from_tensor(videos[:24], labels[:24], True, t, s, seed=cfg.seed)
    va = VideoDataset.from_tensor(videos[24:], labels[24:], False, t, s)
    summary = dict(train(cfg, tr, va, 2), restart=int(restart), steps_run=steps_run[0])
    sys.stdout.write(json.dumps(summary) + "\n")
    sys.stdout.flush()


def _kavg_main(out: str) -> None:
    import torch.distributed as dist

    from tsm_apps.distributed import CommCounter, process_group

    torch.set_num_threads(1)
    env = env_from()
    with process_group(env, torch.device("cpu")):
        comm = CommCounter()
        flat = _kavg_worker(dist.get_rank(), lambda t: comm.all_reduce_(t, "mean"))
        torch.save(flat, Path(out) / f"rank{env.rank}.pt")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    if sys.argv[1] == "kavg":
        _kavg_main(sys.argv[2])
    else:
        _train_worker(sys.argv[2])
