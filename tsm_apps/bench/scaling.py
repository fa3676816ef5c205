"""``tsm bench scaling``: the data-parallel cost model of :mod:`tsm_apps.bench.scaling_model`,
checked on this machine.

The check: 2 gloo processes under torchrun (one thread each) time local steps (``c``), all-reduces
of two sizes (fitting bandwidth and latency) and DDP steps, and count the bytes a DDP step and an
averaging round (Adam) send; the model's 2-process prediction ``c + allreduce(DDP bytes)`` is
compared with the measured DDP step (goal: within 15%), and the measured bytes per parameter of
each method scale the table for 8-1,536 workers (the seeds' settings,
:data:`~tsm_apps.bench.scaling_model.CLUSTER`, each value sourced).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch
import torch.distributed as dist

from ..io import atomic_write_json
from .scaling_model import Cluster, fit_network, measured_cluster, model_sizes, table
from .timing import Figure
from .workers import run_workers


def _timed(fn, repeats: int) -> float:
    fn()  # warm-up
    dist.barrier()
    t0 = time.perf_counter()
    for _ in range(repeats):
        fn()
    dist.barrier()
    return (time.perf_counter() - t0) / repeats


def worker(steps: int, batch: int, reps: int = 3) -> dict:
    """One torchrun rank: local step, all-reduce at two sizes, DDP step (seconds each)."""
    from ..distributed import CommCounter
    from ..models.recognizer import build_recognizer
    from ..train.averaging import KStepAverager

    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = build_recognizer("resnet18", 8, 8, "offline", width=0.25, dropout=0.0)
    g = torch.Generator().manual_seed(dist.get_rank())
    x, y = torch.randn(batch, 8, 3, 96, 96, generator=g), torch.randint(0, 8, (batch,), generator=g)

    def step(net, opt):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(net(x), y).backward()
        opt.step()

    grad_bytes = 4 * sum(p.numel() for p in model.parameters())
    local = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    small, big = torch.zeros(1024), torch.zeros(grad_bytes // 4)
    times = {"local": [], "ddp": [], "ar_small": [], "ar_big": []}
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    comm = CommCounter()
    ddp.register_comm_hook(None, comm.ddp_hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01, momentum=0.9)
    step(ddp, opt)  # one counted DDP step (its bucket calls and bytes)
    ddp_calls, ddp_bytes = comm.calls, comm.bytes
    adam = torch.optim.Adam(model.parameters(), lr=1e-3)
    step(model, adam)  # Adam's moments exist after a step
    averager = KStepAverager(model, adam, -1, lambda t: comm.all_reduce_(t, "mean"))
    averager.average()  # one counted averaging round
    round_sent = comm.bytes - ddp_bytes
    for _ in range(reps):  # interleaved, so load changes touch every kind alike
        times["local"].append(_timed(lambda: step(model, local), steps))
        times["ar_small"].append(_timed(lambda: dist.all_reduce(small), 20))
        times["ar_big"].append(_timed(lambda: dist.all_reduce(big), 5))
        times["ddp"].append(_timed(lambda: step(ddp, opt), steps))
    out = {k: sorted(v)[len(v) // 2] for k, v in times.items()}  # medians
    params, bn = model_sizes(model)
    out.update(
        rank=dist.get_rank(),
        world=dist.get_world_size(),
        grad_bytes=grad_bytes,
        ddp_calls=ddp_calls,
        ddp_bytes=ddp_bytes,
        round_bytes=round_sent,
        params=params,
        bn_channels=bn,
    )
    dist.destroy_process_group()
    return out


def measure(steps: int = 4, batch: int = 4, reps: int = 3) -> dict:
    """The 2-process gloo measurement (torchrun) and the model's prediction for it."""
    args = ["--steps", steps, "--batch", batch, "--reps", reps]
    m = run_workers(__spec__.name, args, nproc=2)
    bw, lat = fit_network(2, 4 * 1024, m["ar_small"], m["grad_bytes"], m["ar_big"])
    here = Cluster(m["local"], m["ddp_bytes"], m["round_bytes"], bw, lat, batch)
    m.update(
        bandwidth=bw, latency=lat, predicted_ddp=here.step_s(2), error=here.step_s(2) / m["ddp"] - 1
    )
    return m


def figures(quick: bool, device: str) -> list:
    """Prediction / measurement of the 2-process DDP step (goal within 15%); prints the table."""
    if device != "cpu":
        return []
    m = measure(steps=2 if quick else 4, reps=3)
    print(
        f"[scaling] 2 gloo processes: local step {m['local']:.3f} s, all-reduce "
        f"{m['grad_bytes'] / 1e6:.2f} MB {m['ar_big'] * 1e3:.1f} ms (bandwidth "
        f"{m['bandwidth'] / 1e9:.2f} GB/s, latency {m['latency'] * 1e6:.0f} us); DDP step "
        f"measured {m['ddp']:.3f} s, predicted {m['predicted_ddp']:.3f} s "
        f"({100 * m['error']:+.1f}%)",
        flush=True,
    )
    print(
        f"[scaling] bytes a process sends, {m['params']:,} parameters: DDP step "
        f"{m['ddp_bytes']:,} ({m['ddp_calls']} bucket calls, "
        f"{m['ddp_bytes'] / m['params']:.2f} B a parameter), averaging round with Adam "
        f"{m['round_bytes']:,} ({m['round_bytes'] / m['params']:.2f} B a parameter)",
        flush=True,
    )
    print("\n".join(table(measured_cluster(m))), flush=True)
    return [
        Figure(
            "scaling model: predicted / measured 2-process DDP step",
            1 + m["error"],
            "x",
            "within 0.85-1.15",
            0.85 <= 1 + m["error"] <= 1.15,
            device,
            {k: v for k, v in m.items() if isinstance(v, (int, float))},
        )
    ]


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--out", type=Path, required=True)
    a = p.parse_args()
    res = worker(a.steps, a.batch, a.reps)
    if res["rank"] == 0:
        atomic_write_json(a.out, res, indent=None)
