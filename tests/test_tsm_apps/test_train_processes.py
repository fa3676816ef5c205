"""Process-level paths the README promises, each run in real processes: SLURM variables, a
SIGTERM mid-epoch, K-step averaging over gloo. (A torchrun elastic restart is not tested: with
torch 2.14.1 the restarted gloo group fails in ``connectFullMesh`` even for a bare
``init_process_group`` + ``all_reduce`` script; docs/experiments/performance.md.)

This file is also the worker script: ``python test_train_processes.py train CONFIG_JSON`` trains
like the worker of ``test_train_distributed.py``; ``TSM_TEST_SIGNAL_AT_STEP=N`` with
``TSM_TEST_SIGNAL=TERM|KILL`` (and ``TSM_TEST_SIGNAL_RANK``) makes that rank signal itself in
step ``N + 1``; ``python test_train_processes.py kavg OUT``
runs K-step averaging rounds on this rank and saves the packed state.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_train_distributed import BASE, ENV, _max_diff, _step_losses, _summaries, _weights  # noqa: E402

from tsm_apps.train.averaging import KStepAverager, pack  # noqa: E402
from tsm_apps.train.distributed import env_from  # noqa: E402

TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--standalone",
            "--nproc-per-node=2", "--monitor-interval=0.5"]


def _run(args: list, launcher: list | None = None, env: dict | None = None, check: bool = True):
    cmd = (launcher or [sys.executable]) + [__file__] + args
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env or ENV)
    if check and r.returncode != 0:
        raise AssertionError(f"{cmd} failed ({r.returncode}):\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return r


def test_slurm_variables_map_to_ranks_and_master_address():
    env = env_from({"SLURM_PROCID": "5", "SLURM_NTASKS": "8", "SLURM_LOCALID": "1",
                    "SLURM_JOB_NODELIST": "gpu[03-05,9],cpu1"})
    assert (env.rank, env.world_size, env.local_rank) == (5, 8, 1)
    assert (env.master_addr, env.launcher) == ("gpu03", "slurm") and env.master_port > 0
    env = env_from({"SLURM_PROCID": "0", "SLURM_NTASKS": "2", "SLURM_NODELIST": "node7",
                    "MASTER_PORT": "29511"})
    assert (env.rank, env.world_size, env.local_rank, env.master_addr, env.master_port) == \
        (0, 2, 0, "node7", 29511)
    # torchrun's variables win under `srun torchrun`
    env = env_from({"SLURM_PROCID": "3", "SLURM_NTASKS": "4", "RANK": "1", "WORLD_SIZE": "2"})
    assert (env.rank, env.world_size, env.launcher) == (1, 2, "torchrun")
    with pytest.raises(ValueError, match="SLURM_PROCID='x'"):
        env_from({"SLURM_PROCID": "x", "SLURM_NTASKS": "2"})


@pytest.mark.slow
def test_sigterm_mid_epoch_saves_a_checkpoint_that_resumes_exactly(tmp_path):
    cfg = dict(BASE, work_dir=str(tmp_path / "term"))
    full = dict(cfg, work_dir=str(tmp_path / "full"))
    _run(["train", json.dumps(full)])
    r = _run(["train", json.dumps(cfg)], env=dict(ENV, TSM_TEST_SIGNAL_AT_STEP="4",
                                                  TSM_TEST_SIGNAL="TERM"))
    s = _summaries(r)[0]
    assert s["stopped"] and s["signal"] == signal.SIGTERM and s["steps"] == 5
    from tsm_apps.checkpoint.reading import read_checkpoint
    ck = read_checkpoint(tmp_path / "term" / "last.pth")
    assert (ck["epoch"], ck["step_in_epoch"], ck["step"]) == (1, 2, 5)  # mid-epoch 2 of 3 steps
    s = _summaries(_run(["train", json.dumps(dict(cfg, resume=True))]))[0]
    assert s["steps"] == 6 and not s["stopped"]
    assert _max_diff(_weights(tmp_path / "full"), _weights(tmp_path / "term")) <= 1e-6
    assert _step_losses(tmp_path / "full") == _step_losses(tmp_path / "term")


def _kavg_worker(rank: int, all_reduce_mean, rounds: int = 3, k: int = 2) -> torch.Tensor:
    """A tiny conv+BN net with Adam, ``rounds`` x ``k`` local steps on this rank's data, the
    averager closing each round; returns the packed (params, BN, Adam moments) state."""
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4),
                              torch.nn.Flatten(), torch.nn.Linear(4 * 4 * 4, 2))
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
    threads = [threading.Thread(target=lambda r=r: results.__setitem__(
        r, _kavg_worker(r, mean_of_both(r)))) for r in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert torch.equal(results[0], results[1])
    assert (got[0] - results[0]).abs().max().item() <= 1e-6


def _train_worker(cfg_json: str) -> None:
    from tests.test_tsm_apps.toy_videos import motion_videos
    from tsm_apps.train import TrainConfig, train, trainer
    from tsm_apps.train.clips import ClipSet

    torch.set_num_threads(1)
    cfg = TrainConfig.from_dict(json.loads(cfg_json))
    at = int(os.environ.get("TSM_TEST_SIGNAL_AT_STEP", "0"))
    rank_ok = os.environ.get("RANK", "0") == os.environ.get("TSM_TEST_SIGNAL_RANK", "0")
    if at and rank_ok:
        sig = getattr(signal, "SIG" + os.environ["TSM_TEST_SIGNAL"])
        step = trainer.Trainer.train_step

        def signalled_step(self, x, y):
            out = step(self, x, y)
            if self.step == at:
                os.kill(os.getpid(), sig)
            return out
        trainer.Trainer.train_step = signalled_step
    videos, labels = motion_videos(32, frames=8, size=32, seed=1)
    tr = ClipSet.from_tensor(videos[:24], labels[:24], True, cfg.segments, cfg.size, seed=cfg.seed)
    va = ClipSet.from_tensor(videos[24:], labels[24:], False, cfg.segments, cfg.size)
    sys.stdout.write(json.dumps(train(cfg, tr, va, 2)) + "\n")
    sys.stdout.flush()


def _kavg_main(out: str) -> None:
    import torch.distributed as dist

    from tsm_apps.train.distributed import CommCounter, process_group
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
