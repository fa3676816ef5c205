"""The large-batch recipe of "Training Kinetics in 15 minutes" (TSM at scale).

* LR scaled linearly with the global batch: ``lr = lr_per_8 * batch / 8`` (paper: 0.00125).
* Linear warm-up from ``warmup_start * lr`` over ``warmup_epochs``, then cosine decay to
  ``min_ratio * lr``; the schedule is a pure function of the (fractional) epoch, so resuming
  needs only the step counter.
* SGD momentum 0.9, weight decay 1e-4 on conv/fc weights only: none on BN and biases.
* Fine-tuning: the fc's LR is ``fc_lr_mult`` (5) times the base LR.
* Partial BN (TSN/TSM): every BN layer except the first keeps its running statistics and affine
  parameters fixed; ``"frozen"`` fixes all BN layers.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

BN_TYPES = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d, nn.SyncBatchNorm)


def scaled_lr(lr_per_8: float, global_batch: int) -> float:
    """Linear scaling rule: ``lr_per_8`` per 8 clips of the global batch."""
    if global_batch < 1:
        raise ValueError(f"global batch must be >= 1, got {global_batch}")
    return lr_per_8 * global_batch / 8


@dataclass(frozen=True)
class LRSchedule:
    """Warm-up then cosine, as a function of the fractional epoch ``e`` in ``[0, epochs]``."""
    base_lr: float
    epochs: float
    warmup_epochs: float = 0.0
    warmup_start: float = 0.1
    min_ratio: float = 0.0

    def factor(self, e: float) -> float:
        if e < self.warmup_epochs:
            return self.warmup_start + (1 - self.warmup_start) * e / self.warmup_epochs
        span = max(self.epochs - self.warmup_epochs, 1e-12)
        p = min(max((e - self.warmup_epochs) / span, 0.0), 1.0)
        return self.min_ratio + (1 - self.min_ratio) * 0.5 * (1 + math.cos(math.pi * p))

    def __call__(self, e: float) -> float:
        return self.base_lr * self.factor(e)


def bn_layers(model: nn.Module) -> list:
    return [m for m in model.modules() if isinstance(m, BN_TYPES)]


def fixed_bn_layers(model: nn.Module, mode: str) -> list:
    """BN layers whose statistics and affine parameters stay fixed under ``mode``."""
    layers = bn_layers(model)
    if mode == "train":
        return []
    if mode == "partial":
        return layers[1:]
    if mode == "frozen":
        return layers
    raise ValueError(f"bn mode must be 'train', 'partial' or 'frozen', got {mode!r}")


def freeze_bn_parameters(model: nn.Module, mode: str) -> None:
    """``requires_grad=False`` for the affine parameters of the fixed BN layers (before DDP)."""
    for m in fixed_bn_layers(model, mode):
        for p in m.parameters(recurse=False):
            p.requires_grad_(False)


def set_train_mode(model: nn.Module, mode: str) -> None:
    """``model.train()``, then eval mode for the fixed BN layers (their running stats stay)."""
    model.train()
    for m in fixed_bn_layers(model, mode):
        m.eval()


def param_groups(model: nn.Module, weight_decay: float, fc_lr_mult: float = 1.0,
                 fc_name: str = "fc") -> list:
    """Optimizer groups: decayed weights, undecayed BN/bias, and the fc with its LR multiplier.

    Each group carries ``lr_mult``; :func:`set_lr` sets ``lr = base * lr_mult``. Parameters
    with ``requires_grad=False`` are left out.
    """
    bn_params = {id(p) for m in bn_layers(model) for p in m.parameters(recurse=False)}
    groups = {("decay", 1.0): [], ("no_decay", 1.0): [], ("decay", fc_lr_mult): [],
              ("no_decay", fc_lr_mult): []}
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        is_fc = name.split(".")[0] == fc_name
        decay = "no_decay" if (id(p) in bn_params or name.endswith("bias") or p.dim() <= 1) \
            else "decay"
        groups[(decay, fc_lr_mult if is_fc else 1.0)].append(p)
    return [{"params": params, "weight_decay": weight_decay if decay == "decay" else 0.0,
             "lr_mult": mult, "name": f"{decay}_x{mult:g}"}
            for (decay, mult), params in groups.items() if params]


def build_optimizer(model: nn.Module, name: str, lr: float, momentum: float = 0.9,
                    weight_decay: float = 1e-4, fc_lr_mult: float = 1.0) -> torch.optim.Optimizer:
    """SGD (momentum) or Adam over :func:`param_groups`."""
    groups = param_groups(model, weight_decay, fc_lr_mult)
    for g in groups:
        g["lr"] = lr * g["lr_mult"]
    if name == "sgd":
        return torch.optim.SGD(groups, lr=lr, momentum=momentum)
    if name == "adam":
        return torch.optim.Adam(groups, lr=lr)
    raise ValueError(f"optimizer must be 'sgd' or 'adam', got {name!r}")


def set_lr(optimizer: torch.optim.Optimizer, lr: float) -> None:
    for g in optimizer.param_groups:
        g["lr"] = lr * g.get("lr_mult", 1.0)
