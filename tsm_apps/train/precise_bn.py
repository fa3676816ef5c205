"""Precise BN: BN statistics recomputed over N training batches with the weights fixed.

While training, a BN layer's running statistics are an exponential average over batches seen
by ever-changing weights. Precise BN (Wu & Johnson 2021, "Rethinking 'Batch' in BatchNorm" §3;
fvcore ``nn/precise_bn.py`` ``update_bn_stats``, which SlowFast's ``tools/train_net.py`` runs
when ``BN.USE_PRECISE_STATS`` is set) replaces them, for the current weights, by the population
statistics of every value the layer sees over N batches: their mean and (biased) variance,
each batch weighted by its number of values (fvcore's ``_PopulationVarianceEstimator``).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterable, Iterator, Optional

import torch
from torch import nn

from .solver.batchnorm import bn_layers


@contextmanager
def _batch_stats(layers: list) -> Iterator[dict]:
    """Momentum 1 (the running buffers hold the last batch's mean and unbiased variance) and a
    pre-hook recording each layer's values per channel; both undone on exit."""
    seen: dict = {}

    def count(module: nn.Module, inputs: tuple) -> None:
        x = inputs[0]  # (N, C, ...): every position of a channel is one value
        seen[module] = x.numel() // x.shape[1]

    momenta = [m.momentum for m in layers]
    handles = [m.register_forward_pre_hook(count) for m in layers]
    try:
        for m in layers:
            m.momentum = 1.0
        yield seen
    finally:
        for m, momentum, h in zip(layers, momenta, handles):
            m.momentum = momentum
            h.remove()


@torch.no_grad()
def precise_bn_(
    model: nn.Module, batches: Iterable, forward: Optional[Callable[[object], object]] = None
) -> int:
    """Set the running mean/var of ``model``'s BN layers in training mode (fixed layers in eval
    mode keep theirs) to the mean and biased variance of all values each saw while ``forward``
    (default ``model(batch)``) ran on every item of ``batches``; returns the forwards run.

    Each forward is one batch of the estimate: a layer that saw ``k`` values with mean ``m``
    and unbiased variance ``v`` adds ``k m`` and ``k (v (k - 1) / k + m^2)`` to its sums
    (float64). With no batch, nothing changes.
    """
    layers = [m for m in bn_layers(model) if m.training and m.track_running_stats]
    forward = forward or model
    sums = {
        m: [
            0,
            torch.zeros_like(m.running_mean, dtype=torch.float64),
            torch.zeros_like(m.running_var, dtype=torch.float64),
        ]
        for m in layers
    }
    n = 0
    with _batch_stats(layers) as seen:
        for batch in batches:
            seen.clear()
            forward(batch)
            n += 1
            for m, k in seen.items():
                mean, var = m.running_mean.double(), m.running_var.double()
                s = sums[m]
                s[0] += k
                s[1] += k * mean
                s[2] += k * (var * (k - 1) / k + mean**2)
    for m, (k, s1, s2) in sums.items():
        if k:
            mean = s1 / k
            m.running_mean.copy_(mean.to(m.running_mean.dtype))
            m.running_var.copy_((s2 / k - mean**2).clamp_min(0).to(m.running_var.dtype))
    return n
