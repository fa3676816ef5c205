"""``tsm train --cuda-graphs``: the network's forward and backward replayed from CUDA graphs.

:class:`GraphedNetwork` captures the network with ``torch.cuda.make_graphed_callables`` (as the
training-step benchmark does, :mod:`tsm_apps.bench.shift_cost`) once per input shape and
replays it after; the loss, the optimizer, loss scaling and gradient clipping stay eager. A
graph replays fixed shapes at fixed addresses, so the run must keep its shapes (no multigrid)
and be one process (no DDP, no K-step averaging); it replays the eager network, so not with
``--compile`` (Inductor's own graphs: ``--compile-mode reduce-overhead``).

What a capture would change is put back: the warm-up runs the network forward three times on
the capture's batch, which moves the BN running statistics, so every buffer is restored after
it. Captures run before a micro-batch reseeds the RNG, so dropout draws from the step's seed.
Gradients are accumulated into ``.grad`` tensors that exist before the first replay: a graph
hands back its gradients in static memory, which autograd may otherwise adopt as ``.grad`` and
the next micro-batch's replay would overwrite.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import torch
from torch import Tensor, nn

from .solver import Precision

__all__ = ["GraphedNetwork", "check_cuda_graphs"]


def check_cuda_graphs(cfg: Any, device: torch.device, world_size: int) -> None:
    """Refuse ``cfg.optim.cuda_graphs`` where a graph cannot replay the step (one-line
    ``ValueError`` naming the option); nothing when it is off."""
    if not cfg.optim.cuda_graphs:
        return
    device = torch.device(device)
    if device.type != "cuda":
        raise ValueError(f"--cuda-graphs needs a CUDA device, got {device}")
    if cfg.multigrid.enabled:
        raise ValueError("--cuda-graphs needs fixed input shapes: not with --multigrid")
    if world_size > 1:
        raise ValueError(
            f"--cuda-graphs trains in one process: not with {world_size} processes (DDP or "
            "K-step averaging)"
        )
    if cfg.optim.compile != "none":
        raise ValueError(
            "--cuda-graphs replays the eager network: not with --compile (CUDA graphs of a "
            "compiled network: --compile inductor --compile-mode reduce-overhead)"
        )


class _Network(nn.Module):
    """A fresh module around the network per capture: ``make_graphed_callables`` replaces the
    ``forward`` of the module it is given, and the network itself must stay eager."""

    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)


class GraphedNetwork:
    """``net``'s forward and backward from a graph per input: ``forward_for(x)`` is the callable
    for ``x`` (captured on the first call with its shape, dtype and the modules' train/eval
    modes; at most ``max_shapes`` captures, then ``net`` itself, eagerly).

    ``precision``: the run's (:func:`~tsm_apps.train.solver.step_precision`); the capture runs
    under its autocast with the cast cache off (as capture requires), and replays happen inside
    the trainer's autocast of the same precision. ``make``:
    ``torch.cuda.make_graphed_callables`` (a test stands in a recording double)."""

    def __init__(
        self,
        net: nn.Module,
        precision: Precision,
        make: Optional[Callable] = None,
        max_shapes: int = 4,
    ) -> None:
        self.net, self.precision, self.max_shapes = net, precision, max_shapes
        self.make = torch.cuda.make_graphed_callables if make is None else make
        self.calls: dict = {}

    def key(self, x: Tensor) -> tuple:
        return (tuple(x.shape), x.dtype, tuple(m.training for m in self.net.modules()))

    def forward_for(self, x: Tensor) -> Callable[[Tensor], Tensor]:
        """The callable that runs ``net`` on ``x``: a replay, captured now when new."""
        key = self.key(x)
        call = self.calls.get(key)
        if call is None and len(self.calls) < self.max_shapes:
            call = self.calls[key] = self.capture(x)
        return self.net if call is None else call

    def capture(self, x: Tensor) -> Callable[[Tensor], Tensor]:
        """``make(module around net, (x,))`` under the run's autocast with its cache off; the
        buffers (BN statistics) the warm-up moved are put back."""
        buffers = list(self.net.buffers())
        saved = [b.clone() for b in buffers]
        for p in self.net.parameters():  # gradients accumulate in place (module docstring)
            if p.requires_grad and p.grad is None:
                p.grad = torch.zeros_like(p)
        p = self.precision
        with torch.autocast(x.device.type, dtype=p.dtype, enabled=p.enabled, cache_enabled=False):
            call = self.make(_Network(self.net), (x.detach().clone(),))
        with torch.no_grad():
            for b, s in zip(buffers, saved):
                b.copy_(s)
        return call
