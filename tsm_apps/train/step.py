"""One optimisation step of the training loop (the trainer's ``train_step``), and its RNG seed."""

from __future__ import annotations

from contextlib import nullcontext

import torch
from torch import Tensor, nn
from torch.nn.parallel import DistributedDataParallel

from .loader import on_device


def step_seed(seed: int, rank: int, step: int) -> int:
    """The global RNG seed of micro-batch stream ``rank`` at ``step`` (dropout masks)."""
    return ((seed * 1_000_003 + rank) * 1_000_003 + step) % (2**63)


def train_step(self, x: Tensor, y: Tensor) -> Tensor:
    """Forward/backward over ``accum_steps`` micro-batches, clip, update; the mean loss.

    ``x`` is ``(N, T, C, S, S)`` (float, or uint8 normalised on the device:
    :func:`~tsm_apps.train.loader.on_device`), ``y`` ``(N,)``. ``A = accum_steps x
    bn_splits`` (multigrid's sub-batch BN: BN groups of constant size). Micro-batch ``m``
    takes clips ``m, m + A, ...`` of the batch, the clips process ``m`` of ``A`` would take,
    and reseeds the RNG (dropout) from ``(seed, rank * A + m, step)``, so ``W`` processes and
    one process with ``accum_steps = W`` compute the same update. ``self`` is the
    :class:`~tsm_apps.train.trainer.Trainer` (this is its method).
    """
    x = on_device(x, self.device, self.cfg.model.modality)  # uint8 clips: normalised there
    y = y.to(self.device, non_blocking=True)
    parts, n = self.cfg.optim.accum_steps * self.bn_splits, len(y)
    if n < parts:
        raise ValueError(f"batch of {n} clips cannot be split into {parts} micro-batches")
    self.optimizer.zero_grad(set_to_none=True)
    total = torch.zeros((), device=self.device)
    for m in range(parts):
        xm, ym = x[m::parts], y[m::parts]
        torch.manual_seed(step_seed(self.cfg.seed, self.env.rank * parts + m, self.step))
        ddp = getattr(self.net, "_orig_mod", self.net)  # under torch.compile: the wrapped net
        defer = m < parts - 1 and isinstance(ddp, DistributedDataParallel)
        with ddp.no_sync() if defer else nullcontext():
            with torch.autocast(self.device.type, enabled=self.amp):
                loss = nn.functional.cross_entropy(self.net(xm), ym) * (len(ym) / n)
            self.scaler.scale(loss).backward()
        total += loss.detach().float()
    if self.cfg.optim.clip_grad > 0:
        self.scaler.unscale_(self.optimizer)
        nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.optim.clip_grad)
    self.scaler.step(self.optimizer)
    self.scaler.update()
    return total
