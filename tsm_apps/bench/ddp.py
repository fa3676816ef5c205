"""DDP scaling figure: throughput(2 processes) / (2 x throughput(1 process)), gloo on CPU.

Launched with ``torchrun`` (no home-made spawner); each worker uses one thread so the figure
measures data-parallel overhead (all-reduce), not thread contention. Clips are in-memory tensors
shaped like the synthetic temporal set's training input (8 x 3 x 96 x 96).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
import torch.distributed as dist

from ..models.recognizer import build_recognizer
from .timing import Figure
from .workers import run_workers


def worker(steps: int, batch: int) -> dict:
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = build_recognizer("resnet18", 8, 8, "offline", width=0.25, dropout=0.0)
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01, momentum=0.9)
    g = torch.Generator().manual_seed(rank)
    x = torch.randn(batch, 8, 3, 96, 96, generator=g)
    y = torch.randint(0, 8, (batch,), generator=g)
    for i in range(steps + 1):
        if i == 1:  # first step is warm-up
            dist.barrier()
            t0 = time.perf_counter()
        opt.zero_grad()
        torch.nn.functional.cross_entropy(ddp(x), y).backward()
        opt.step()
    dist.barrier()
    dt = time.perf_counter() - t0
    dist.destroy_process_group()
    return {"rank": rank, "world": world, "clips_per_s": world * batch * steps / dt}


def _launch(nproc: int, steps: int, batch: int) -> float:
    """The workers' clips/s under torchrun (:func:`.workers.run_workers`)."""
    args = ["--steps", steps, "--batch", batch]
    return run_workers(__spec__.name, args, nproc, timeout_s=600)["clips_per_s"]


def ddp_scaling(quick: bool) -> list:
    steps, batch = (3, 4) if quick else (10, 8)
    one = _launch(1, steps, batch)
    two = _launch(2, steps, batch)
    eff = two / (2 * one)
    return [
        Figure(
            "DDP scaling efficiency, 2 vs 1 gloo process (1 thread each)",
            eff,
            "",
            "1.0 is perfect",
            None,
            "cpu",
            {"clips_per_s_1": one, "clips_per_s_2": two, "batch_per_process": batch},
        )
    ]


def figures(quick: bool, device: str) -> list:
    """The ``ddp`` entry of the ``tsm.bench`` group: measured once, on CPU with gloo."""
    return ddp_scaling(quick) if device == "cpu" else []


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--out", type=Path, required=True, help="rank 0 writes its figure here (JSON)")
    a = p.parse_args()
    row = worker(a.steps, a.batch)
    if row["rank"] == 0:
        a.out.write_text(json.dumps(row))
