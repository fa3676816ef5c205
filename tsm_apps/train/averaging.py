"""K-step model averaging with merged BN statistics and averaged optimizer state (AAVG).

"Accelerating deep neural network training for action recognition on a cluster of GPUs",
Algorithm 2: every worker takes ``K`` local steps on its own batches, then one averaging round
replaces, on every worker,

* each parameter by the mean over workers;
* each BN layer's running statistics by the statistics of the pooled data: the mean of the
  means, and the variance from ``E[x^2] - mean^2`` with ``E[x^2] = mean(var_w + mean_w^2)``
  (averaging variances alone would drop the spread of the workers' means);
* the optimizer's moment estimates by their means (Adam's ``exp_avg``/``exp_avg_sq``, SGD's
  momentum buffer).

One round is one all-reduce of a single float32 buffer (``pack`` -> all-reduce mean ->
``unpack_``): the trainable parameters, two values per BN channel and the moments, i.e.
``4 x (P + 2 C + M P)`` bytes for ``P`` trainable parameters, ``C`` BN channels and ``M`` moments
per parameter (Adam 2, SGD with momentum 1) -- float32 because that is the precision the
parameters, statistics and moments are kept in; a float64 buffer would double the traffic and
add nothing to a mean of float32 values.
:class:`AdaptiveBatch` grows the per-worker batch by ``b2`` when the validation accuracy falls
below ``b1`` times the best so far (Algorithm 1), up to a cap; the prose's margin rule is an option.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

import torch
from torch import Tensor, nn

from ..options import option
from .solver.batchnorm import bn_layers

AVERAGING = ("none", "kavg")
ADAPTIVE_RULES = ("factor", "margin")


@dataclass
class AveragingConfig:
    """K-step model averaging (AAVG, Algorithm 2): ``k`` local steps, then one averaging round.

    ``k = -1`` averages once per epoch. The per-process batch grows by ``b2`` (up to
    ``batch_cap`` clips per process) when the val top-1 ``a`` stalls against the best ``a*``:
    ``adaptive_rule="factor"`` (Algorithm 1, line 15): ``a < a* x b1``; ``"margin"`` (the
    paper's prose): ``a < a* + b1`` points.
    """

    method: str = field(
        default="none",
        **option(
            "kavg: K-step model averaging instead of DDP's every-step all-reduce",
            flag="averaging",
            choices=AVERAGING,
        ),
    )
    k: int = field(
        default=8, **option("kavg: local steps between averaging rounds (-1: one round per epoch)")
    )
    b1: float = field(
        default=1.0,
        **option(
            "kavg: threshold on the best top-1 (a factor, or points with --adaptive-rule margin)"
        ),
    )
    b2: int = field(default=2, **option("kavg: batch growth factor"))
    batch_cap: int = field(
        default=0, **option("kavg: largest batch per process (0: 4x the starting batch)")
    )
    adaptive_rule: str = field(
        default="factor",
        **option(
            "kavg: grow the batch when top-1 < best x b1 (factor, Algorithm 1) or < best + b1 "
            "points (margin, the paper's prose)",
            choices=ADAPTIVE_RULES,
        ),
    )

    def __post_init__(self) -> None:
        if self.adaptive_rule not in ADAPTIVE_RULES:
            raise ValueError(
                f"adaptive_rule must be one of {ADAPTIVE_RULES}, got {self.adaptive_rule!r}"
            )
        if self.method not in AVERAGING:
            raise ValueError(f"averaging must be one of {AVERAGING}, got {self.method!r}")
        if self.k == 0 or self.k < -1:
            raise ValueError(f"k must be >= 1 or -1 (once per epoch), got {self.k}")
        if self.b2 < 1:
            raise ValueError(f"b2 (batch growth factor) must be >= 1, got {self.b2}")


MOMENT_KEYS = ("exp_avg", "exp_avg_sq", "momentum_buffer")


def merge_bn_stats(means: Tensor, variances: Tensor) -> tuple:
    """Pooled statistics of ``W`` equal-sized workers: ``means``/``variances`` are ``(W, C)``.

    Returns ``(mean (C,), var (C,))`` with ``mean = means.mean(0)`` and
    ``var = (variances + means**2).mean(0) - mean**2``.
    """
    if means.shape != variances.shape or means.dim() != 2:
        raise ValueError(
            f"means and variances must both be (W, C), got {tuple(means.shape)} "
            f"and {tuple(variances.shape)}"
        )
    mean = means.mean(0)
    return mean, (variances + means**2).mean(0) - mean**2


def _moments(optimizer: Optional[torch.optim.Optimizer]) -> list:
    if optimizer is None:
        return []
    out = []
    for group in optimizer.param_groups:
        for p in group["params"]:
            state = optimizer.state.get(p, {})
            out += [state[k] for k in MOMENT_KEYS if isinstance(state.get(k), Tensor)]
    return out


def _params(model: nn.Module) -> list:
    """The parameters a round averages: the trainable ones (fixed ones never differ)."""
    return [p for p in model.parameters() if p.requires_grad]


def pack(
    model: nn.Module, optimizer: Optional[torch.optim.Optimizer] = None, params: bool = True
) -> Tensor:
    """One float32 buffer: trainable parameters (if ``params``), per-BN ``[mean, var + mean^2]``,
    the optimizer's moments."""
    parts = [p.detach().reshape(-1) for p in _params(model)] if params else []
    for bn in bn_layers(model):
        if bn.running_mean is not None:
            parts += [bn.running_mean, bn.running_var + bn.running_mean**2]
    parts += [m.reshape(-1) for m in _moments(optimizer)]
    return torch.cat([p.float() for p in parts]) if parts else torch.zeros(0)


@torch.no_grad()
def unpack_(
    model: nn.Module, optimizer: Optional[torch.optim.Optimizer], flat: Tensor, params: bool = True
) -> None:
    """Write an averaged :func:`pack` buffer back; BN variance becomes ``E[x^2] - mean^2``."""
    pos = 0

    def take(n: int) -> Tensor:
        nonlocal pos
        if pos + n > flat.numel():
            raise ValueError(
                f"buffer of {flat.numel()} values is too short for this model/optimizer"
            )
        pos += n
        return flat[pos - n : pos]

    for p in _params(model) if params else ():
        p.copy_(take(p.numel()).view_as(p))
    for bn in bn_layers(model):
        if bn.running_mean is not None:
            mean = take(bn.running_mean.numel())
            ex2 = take(bn.running_var.numel())
            bn.running_mean.copy_(mean)
            bn.running_var.copy_((ex2 - mean**2).clamp_min(0))
    for m in _moments(optimizer):
        m.copy_(take(m.numel()).view_as(m))
    if pos != flat.numel():
        raise ValueError(f"buffer has {flat.numel()} values, the model/optimizer use {pos}")


def merge_bn_(model: nn.Module, all_reduce_mean: Callable[[Tensor], Tensor]) -> None:
    """Replace every BN layer's running statistics by those of all workers' data pooled.

    Synchronous DDP runs without broadcasting buffers call this once before each evaluation and
    checkpoint (one all-reduce), so the saved statistics describe every worker's clips.
    """
    flat = pack(model, params=False)
    if flat.numel():
        unpack_(model, None, all_reduce_mean(flat), params=False)


class KStepAverager:
    """Decides when to average and runs the round through ``all_reduce_mean`` (injected).

    ``k = -1``: once per epoch. A round also closes every epoch so evaluation and checkpoints
    see one model. ``synced``: no local step since the last round (every process holds the
    same model).
    """

    def __init__(
        self,
        model: nn.Module,
        optimizer: torch.optim.Optimizer,
        k: int,
        all_reduce_mean: Callable[[Tensor], Tensor],
    ) -> None:
        self.model, self.optimizer, self.k = model, optimizer, k
        self.all_reduce_mean = all_reduce_mean
        self.rounds, self.synced = 0, True

    def average(self) -> None:
        flat = self.all_reduce_mean(pack(self.model, self.optimizer))
        unpack_(self.model, self.optimizer, flat)
        self.rounds, self.synced = self.rounds + 1, True

    def after_step(self, step_in_epoch: int, last_in_epoch: bool) -> bool:
        """Call after each local step (``step_in_epoch`` counts from 1). True when averaged."""
        self.synced = False
        if last_in_epoch or (self.k > 0 and step_in_epoch % self.k == 0):
            self.average()
        return self.synced


class AdaptiveBatch:
    """Per-worker batch of AAVG's Algorithm 1, grown by ``b2`` (up to ``cap``) after a stall.

    ``rule="factor"`` (Algorithm 1, line 15, the default): grow when ``a < a* x b1``, with
    ``a*`` the best accuracy before this epoch; the paper's ``b1 = 1`` grows the batch only
    when accuracy falls below the best. ``rule="margin"`` (the paper's prose): grow when
    ``a < a* + b1`` (``b1`` in points), i.e. whenever accuracy does not improve by ``b1``.
    """

    def __init__(self, batch: int, b1: float, b2: int, cap: int, rule: str = "factor") -> None:
        if cap < batch:
            raise ValueError(f"batch cap {cap} is below the starting batch {batch}")
        if rule not in ADAPTIVE_RULES:
            raise ValueError(f"adaptive rule must be one of {ADAPTIVE_RULES}, got {rule!r}")
        self.batch, self.b1, self.b2, self.cap, self.rule = batch, b1, b2, cap, rule
        self.best: Optional[float] = None

    def stalled(self, top1: float) -> bool:
        """True when ``top1`` triggers growth against the best so far (none before epoch 1)."""
        if self.best is None:
            return False
        return top1 < (self.best * self.b1 if self.rule == "factor" else self.best + self.b1)

    def update(self, top1: float) -> int:
        """Record a validation top-1 (percent); returns the batch for the next epoch."""
        if self.stalled(top1):
            self.batch = min(self.batch * self.b2, self.cap)
        self.best = top1 if self.best is None else max(self.best, top1)
        return self.batch

    def state_dict(self) -> dict:
        return {"batch": self.batch, "best": self.best}

    def load_state_dict(self, d: dict) -> None:
        self.batch, self.best = int(d["batch"]), d["best"]
