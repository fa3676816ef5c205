"""The data-parallel cost model of ``tsm bench scaling`` (checked on this machine by
:mod:`tsm_apps.bench.scaling`).

Per step of one worker (``n`` workers, ``b`` clips each):

* compute ``c`` seconds (forward + backward + update), measured by the check;
* input ``b / r`` seconds at ``r`` clips/s per worker (0: not limiting); the step waits for the
  slower of compute and input;
* ring all-reduce of ``B`` bytes: ``2 (n - 1) / n * B / bandwidth + 2 (n - 1) * latency``.

Synchronous DDP all-reduces the float32 gradients every step; K-step averaging (AAVG)
all-reduces one float32 buffer of parameters, BN statistics and optimizer moments once every
``K`` steps (:func:`round_bytes`: ``4 (P + M P + 2 C)`` bytes, ``M`` moments a parameter: Adam 2).
Efficiency = (time of a step without communication) / (time of a step).

:data:`CLUSTER` holds the seeds' settings (ResNet-50 TSM, 8-1,536 V100s), each value sourced;
:func:`table` gives the model's rows for :data:`WORKERS`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from torch import nn

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


def fit_network(
    n: int, small_bytes: float, t_small: float, big_bytes: float, t_big: float
) -> tuple:
    """``(bandwidth, latency)`` of the ring model through two timed all-reduce sizes."""
    hops, share = 2 * (n - 1), 2 * (n - 1) / n
    bandwidth = share * (big_bytes - small_bytes) / max(t_big - t_small, 1e-9)
    latency = max(t_small - share * small_bytes / bandwidth, 0.0) / hops
    return bandwidth, latency


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
    """``cluster`` with the bytes of the 2-process run ``m``
    (:func:`~tsm_apps.bench.scaling.measure`): its DDP step and
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
