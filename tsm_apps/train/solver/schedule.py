"""The learning rate over a run: the large-batch rules of "Training Kinetics in 15 minutes" (TSM
at scale) and the schedules of the reference recipes.

* LR scaled linearly with the global batch: ``lr = lr_per_8 * batch / 8`` (paper: 0.00125);
  ``lr_scaling = "process"`` scales with one process's batch instead, so the LR does not depend
  on the number of learners (AAVG's Algorithm 1): :func:`base_lr`.
* Linear warm-up from ``warmup_start * lr`` (``warmup_rule = "worker"``: from one worker's LR,
  Goyal et al. 2017 §2.2: :func:`warmup_ratio`) over ``warmup_epochs``, then cosine decay to
  ``min_ratio * lr`` (or steps, or constant: :class:`LRSchedule`); the schedule is a pure
  function of the (fractional) epoch, so resuming needs only the step counter.
* :func:`set_lr` sets each parameter group's LR to ``lr x lr_mult`` (:mod:`.groups`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch


def scaled_lr(lr_per_8: float, global_batch: int) -> float:
    """Linear scaling rule: ``lr_per_8`` per 8 clips of the global batch."""
    if global_batch < 1:
        raise ValueError(f"global batch must be >= 1, got {global_batch}")
    return lr_per_8 * global_batch / 8


LR_POLICIES = ("cosine", "step", "constant")
LR_SCALINGS = ("global", "process")
WARMUP_RULES = ("fraction", "worker")


def base_lr(
    lr_per_8: float, batch_size: int, world_size: int = 1, scaling: str = "global"
) -> float:
    """The run's LR: ``lr_per_8`` per 8 clips of the global ``batch_size`` (``"global"``, the
    linear scaling rule), or of one process's share ``batch_size / world_size``
    (``"process"``: the same LR on 1 or ``W`` learners, as AAVG's Algorithm 1 steps)."""
    if scaling not in LR_SCALINGS:
        raise ValueError(f"lr scaling must be one of {LR_SCALINGS}, got {scaling!r}")
    if world_size < 1 or batch_size % world_size:
        raise ValueError(f"batch_size {batch_size} must split evenly into {world_size} processes")
    return scaled_lr(lr_per_8, batch_size if scaling == "global" else batch_size // world_size)


def warmup_ratio(
    rule: str,
    fraction: float,
    batch_size: int,
    world_size: int = 1,
    accum_steps: int = 1,
    scaling: str = "global",
) -> float:
    """First LR of the warm-up over :func:`base_lr`: ``fraction`` (``"fraction"``), or the LR of
    one worker's batch (``"worker"``: Goyal et al. 2017 §2.2, from ``eta`` to ``k x eta``). A
    worker is one micro-batch stream: ``batch_size / (world_size x accum_steps)`` clips, so
    one process with ``accum_steps = W`` warms up as ``W`` processes do."""
    if rule not in WARMUP_RULES:
        raise ValueError(f"warm-up rule must be one of {WARMUP_RULES}, got {rule!r}")
    if rule == "fraction":
        return fraction
    streams = world_size * accum_steps
    if batch_size % streams:
        raise ValueError(f"batch_size {batch_size} must split into {streams} micro-batches")
    return scaled_lr(1.0, batch_size // streams) / base_lr(1.0, batch_size, world_size, scaling)


@dataclass(frozen=True)
class LRSchedule:
    """The LR as a function of the fractional epoch ``e``: a linear warm-up from
    ``warmup_start x base_lr`` to the policy's value at ``warmup_epochs`` (SlowFast's
    ``get_lr_at_epoch``), then the policy:

    * ``cosine``: ``min_ratio + (1 - min_ratio) (1 + cos(pi p)) / 2`` with ``p`` the fraction of
      ``[warmup_epochs, epochs]`` done;
    * ``step``: ``lrs[i]`` in the phase ``steps[i] <= e < steps[i + 1]`` (``steps`` start at 0;
      the official TSM ``adjust_learning_rate``: x0.1 at each of ``--lr_steps``; SlowFast's
      ``steps_with_relative_lrs``);
    * ``constant``: 1.
    """

    base_lr: float
    epochs: float
    warmup_epochs: float = 0.0
    warmup_start: float = 0.1
    min_ratio: float = 0.0
    policy: str = "cosine"
    steps: tuple = (0.0,)
    lrs: tuple = (1.0,)

    def __post_init__(self) -> None:
        if self.policy not in LR_POLICIES:
            raise ValueError(f"lr policy must be one of {LR_POLICIES}, got {self.policy!r}")
        st = list(self.steps)
        if (
            len(st) != len(self.lrs)
            or not st
            or st[0] != 0
            or any(b < a for a, b in zip(st, st[1:]))
        ):
            raise ValueError(
                f"step policy: steps must start at 0, rise, and match lrs one to "
                f"one, got steps {self.steps!r} and lrs {self.lrs!r}"
            )

    def decay(self, e: float) -> float:
        """The policy's factor at epoch ``e`` (no warm-up)."""
        if self.policy == "constant":
            return 1.0
        if self.policy == "step":
            return self.lrs[sum(1 for s in self.steps[1:] if e >= s)]
        span = max(self.epochs - self.warmup_epochs, 1e-12)
        p = min(max((e - self.warmup_epochs) / span, 0.0), 1.0)
        return self.min_ratio + (1 - self.min_ratio) * 0.5 * (1 + math.cos(math.pi * p))

    def factor(self, e: float) -> float:
        if e < self.warmup_epochs:
            end = self.decay(self.warmup_epochs)
            return self.warmup_start + (end - self.warmup_start) * e / self.warmup_epochs
        return self.decay(e)

    def __call__(self, e: float) -> float:
        return self.base_lr * self.factor(e)


def run_schedule(
    cfg, world_size: int, epochs: float, policy: str, steps: tuple, lrs: tuple
) -> "LRSchedule":
    """The :class:`LRSchedule` of a ``TrainConfig`` on ``world_size`` processes over ``epochs``:
    :func:`base_lr` with ``cfg.optim.lr_scaling``, the warm-up from :func:`warmup_ratio` with
    ``cfg.optim.warmup_rule``, then ``policy`` (``steps``/``lrs``: the step policy's phases)."""
    o = cfg.optim
    lr = base_lr(o.lr_per_8, o.batch_size, world_size, o.lr_scaling)
    start = warmup_ratio(
        o.warmup_rule, o.warmup_start, o.batch_size, world_size, o.accum_steps, o.lr_scaling
    )
    return LRSchedule(lr, epochs, o.warmup_epochs, start, o.min_lr_ratio, policy, steps, lrs)


def step_lrs(lr_steps: list, gamma: float = 0.1) -> tuple:
    """``(steps, lrs)`` of x``gamma`` at each epoch of ``lr_steps`` (official ``--lr_steps``)."""
    return (0.0, *[float(s) for s in lr_steps]), tuple(gamma**i for i in range(len(lr_steps) + 1))


def set_lr(optimizer: torch.optim.Optimizer, lr: float) -> None:
    for g in optimizer.param_groups:
        g["lr"] = lr * g.get("lr_mult", 1.0)
