"""The optimizer over the parameter groups (:mod:`.groups`): SGD with momentum 0.9 (optionally
Nesterov), weight decay per group (1e-4 on conv/fc weights only in the suite's own policy), or
Adam."""

from __future__ import annotations

import torch


def build_optimizer(
    groups: list, name: str, lr: float, momentum: float = 0.9, nesterov: bool = False
) -> torch.optim.Optimizer:
    """SGD (momentum, optionally Nesterov) or Adam over ``groups``
    (:mod:`.groups`); each group's LR is ``lr x lr_mult``."""
    for g in groups:
        g["lr"] = lr * g["lr_mult"]
    if name == "sgd":
        return torch.optim.SGD(groups, lr=lr, momentum=momentum, nesterov=nesterov)
    if name == "adam":
        return torch.optim.Adam(groups, lr=lr)
    raise ValueError(f"optimizer must be 'sgd' or 'adam', got {name!r}")
