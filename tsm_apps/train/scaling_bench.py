"""``tsm bench scaling``: a cost model of data-parallel training, checked on this machine.

Per step of one worker (``n`` workers, ``b`` clips each):

* compute ``c`` seconds (forward + backward + update), measured here;
* input ``b / r`` seconds at ``r`` clips/s per worker (0: not limiting); the step waits for the
  slower of compute and input;
* ring all-reduce of ``B`` bytes: ``2 (n - 1) / n * B / bandwidth + 2 (n - 1) * latency``.

Synchronous DDP all-reduces the float32 gradients every step; K-step averaging (AAVG)
all-reduces one float32 buffer of parameters, BN statistics and optimizer moments once every
``K`` steps (:func:`round_bytes`: ``4 (P + M P + 2 C)`` bytes, ``M`` moments a parameter: Adam 2).
Efficiency = (time of a step without communication) / (time of a step).

The check: 2 gloo processes under torchrun (one thread each) time local steps (``c``), all-reduces
of two sizes (fitting bandwidth and latency) and DDP steps, and count the bytes a DDP step and an
averaging round (Adam) send; the model's 2-process prediction ``c + allreduce(DDP bytes)`` is
compared with the measured DDP step (goal: within 15%), and the measured bytes per parameter of
each method scale the table for 8-1,536 workers (the seeds' settings, :data:`CLUSTER`, each value
sourced).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn

from ..bench.timing import Figure
from ..io import atomic_write_json, read_json

WORKERS = (8, 16, 32, 64, 128, 256, 512, 1024, 1536)


def model_sizes(model: nn.Module) -> tuple:
    """``(trainable parameters, BN channels with running statistics)``."""
    params = sum(p.numel() for p in model.parameters() if p.requires_grad)
    bn = sum(
        m.num_features
        for m in model.modules()
        if isinstance(m, nn.modules.batchnorm._BatchNorm) and m.running_mean is not None
    )
    return params, bn


def round_bytes(params: int, bn_channels: int, moments: int) -> int:
    """Bytes a process sends into one K-step averaging round (``averaging.pack``, float32):
    the parameters, ``moments`` optimizer moments a parameter (Adam 2, SGD momentum 1) and two
    values a BN channel."""
    return 4 * (params * (1 + moments) + 2 * bn_channels)


def ring_allreduce_s(n: int, nbytes: float, bandwidth: float, latency: float) -> float:
    """Seconds of a ring all-reduce of ``nbytes`` over ``n`` workers (bytes/s, s per hop)."""
    if n <= 1:
        return 0.0
    return 2 * (n - 1) / n * nbytes / bandwidth + 2 * (n - 1) * latency


@dataclass(frozen=True)
class Cluster:
    """Per-worker figures of a data-parallel run (see :data:`CLUSTER` for the seeds')."""

    compute_s: float  # one step's forward + backward + update
    grad_bytes: float  # synchronous DDP: bytes a step sends (fp32 gradients)
    avg_bytes: float  # K-step averaging: bytes a round sends (params, BN stats, moments)
    bandwidth: float  # bytes/s per worker in the ring
    latency: float  # seconds per ring hop
    batch: int = 8  # clips per worker
    input_rate: float = 0.0  # clips/s per worker; 0: input never limits

    def local_s(self) -> float:
        feed = self.batch / self.input_rate if self.input_rate > 0 else 0.0
        return max(self.compute_s, feed)

    def step_s(self, n: int, method: str = "sync", k: int = 8) -> float:
        """Mean seconds per step on ``n`` workers (``method`` "sync" or "kavg")."""
        if method == "sync":
            return self.local_s() + ring_allreduce_s(
                n, self.grad_bytes, self.bandwidth, self.latency
            )
        return (
            self.local_s() + ring_allreduce_s(n, self.avg_bytes, self.bandwidth, self.latency) / k
        )

    def efficiency(self, n: int, method: str = "sync", k: int = 8) -> float:
        return self.local_s() / self.step_s(n, method, k)


# The seeds' settings. ResNet-50 TSM (8 frames) with a 400-class fc: 24,327,632 parameters and
# 26,560 BN channels (model_sizes of build_recognizer("resnet50", 400, 8); a test holds these):
# 97.3 MB of fp32 gradients a DDP step; AAVG averages with Adam (Algorithm 1): parameters, both
# moments and the BN statistics, 292.1 MB a round. Compute: 33 GFLOPs per clip forward (TSM
# paper, table 1), x3 for forward + backward, 8 clips per GPU ("Training Kinetics in 15
# minutes": 8 clips per V100), at half of a V100's 15.7 TFLOP/s fp32 peak (an assumption).
# Network: Summit nodes (the 15-minute paper's 1,536 V100s = 256 nodes x 6) have dual-rail EDR
# InfiniBand, 2 x 100 Gb/s = 25 GB/s per node, shared by 6 GPUs in a flat ring: 4.2 GB/s each;
# 10 us per hop (an assumption, typical of NCCL over InfiniBand).
R50_PARAMS, R50_BN = 24_327_632, 26_560
CLUSTER = Cluster(
    compute_s=3 * 33e9 * 8 / (0.5 * 15.7e12),
    grad_bytes=4 * R50_PARAMS,
    avg_bytes=round_bytes(R50_PARAMS, R50_BN, 2),
    bandwidth=25e9 / 6,
    latency=10e-6,
    batch=8,
)


def measured_cluster(m: dict, cluster: Cluster = CLUSTER, params: int = R50_PARAMS) -> Cluster:
    """``cluster`` with the bytes of the 2-process run ``m`` (:func:`measure`): its DDP step and
    averaging round bytes per parameter, times ``params``."""
    return dataclasses.replace(
        cluster,
        grad_bytes=m["ddp_bytes"] / m["params"] * params,
        avg_bytes=m["round_bytes"] / m["params"] * params,
    )


def table(cluster: Cluster = CLUSTER, workers=WORKERS, k: int = 8) -> list:
    """Markdown rows: workers, sync step (s) and efficiency, K-step averaging's, speed-up."""
    rows = [
        "| workers | sync step (s) | sync efficiency | K-avg (K=%d) step (s) | K-avg efficiency |"
        " clips/s sync | clips/s K-avg |" % k,
        "|---|---|---|---|---|---|---|",
    ]
    for n in workers:
        s, a = cluster.step_s(n, "sync"), cluster.step_s(n, "kavg", k)
        rows.append(
            f"| {n} | {s:.3f} | {cluster.efficiency(n):.1%} | {a:.3f} | "
            f"{cluster.efficiency(n, 'kavg', k):.1%} | {n * cluster.batch / s:,.0f} | "
            f"{n * cluster.batch / a:,.0f} |"
        )
    return rows


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
    from .averaging import KStepAverager

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


def fit_network(
    n: int, small_bytes: float, t_small: float, big_bytes: float, t_big: float
) -> tuple:
    """``(bandwidth, latency)`` of the ring model through two timed all-reduce sizes."""
    hops, share = 2 * (n - 1), 2 * (n - 1) / n
    bandwidth = share * (big_bytes - small_bytes) / max(t_big - t_small, 1e-9)
    latency = max(t_small - share * small_bytes / bandwidth, 0.0) / hops
    return bandwidth, latency


def measure(steps: int = 4, batch: int = 4, reps: int = 3) -> dict:
    """The 2-process gloo measurement (torchrun) and the model's prediction for it."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rank0.json"
        cmd = [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc-per-node=2",
            "-m",
            __spec__.name,
            "--steps",
            str(steps),
            "--batch",
            str(batch),
            "--reps",
            str(reps),
            "--out",
            str(out),
        ]
        r = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            timeout=1200,
            env=dict(os.environ, OMP_NUM_THREADS="1"),
        )
        if r.returncode != 0 or not out.is_file():
            raise RuntimeError(
                f"torchrun exited {r.returncode} without rank 0's figure: {r.stderr[-2000:]}"
            )
        m = read_json(out)
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
