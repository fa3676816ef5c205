"""Which BatchNorm layers train: partial BN (TSN/TSM) keeps every BN layer except the first with
its running statistics and affine parameters fixed; ``"frozen"`` fixes all of them; ``"train"``
none."""

from __future__ import annotations

from torch import nn

BN_TYPES = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d, nn.SyncBatchNorm)
BN_MODES = ("train", "partial", "frozen")


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
