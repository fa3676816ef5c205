"""Input normalisation, defined once for every part of the suite.

RGB: ImageNet mean/std on values in ``[0, 1]`` (torchvision, the official TSM repository's
``GroupNormalize``; mmaction2's ``mean=[123.675, 116.28, 103.53], std=[58.395, 57.12, 57.375]``
on 0-255 values are the same numbers times 255). Flow: mean 0.5, std 0.226 for every channel
(official TSM ``ops/models.py``: ``input_mean [0.5]``, ``input_std`` the mean of ImageNet's std).
"""

from __future__ import annotations

from typing import Sequence, Union

import torch
from torch import Tensor

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
FLOW_MEAN = 0.5
FLOW_STD = 0.226

Stat = Union[float, Sequence[float]]

__all__ = [
    "IMAGENET_MEAN",
    "IMAGENET_STD",
    "FLOW_MEAN",
    "FLOW_STD",
    "normalize",
    "normalize_uint8",
    "modality_stats",
]


def modality_stats(modality: str) -> tuple:
    """``(mean, std)`` of ``"rgb"`` (per channel) or ``"flow"`` (one value for all channels)."""
    if modality == "rgb":
        return IMAGENET_MEAN, IMAGENET_STD
    if modality == "flow":
        return FLOW_MEAN, FLOW_STD
    raise ValueError(f"modality must be 'rgb' or 'flow', got {modality!r}")


def normalize(x: Tensor, mean: Stat = IMAGENET_MEAN, std: Stat = IMAGENET_STD) -> Tensor:
    """``(x - mean) / std`` on a float tensor ``(..., C, H, W)`` with values in ``[0, 1]``;
    ``mean``/``std`` are one value or ``C`` values (a new tensor; ``x`` is left as it is)."""
    if not torch.is_tensor(x) or x.dim() < 3 or not x.is_floating_point():
        got = f"{x.dtype} {tuple(x.shape)}" if torch.is_tensor(x) else type(x).__name__
        raise ValueError(f"normalize expects a float tensor (..., C, H, W), got {got}")
    m, s = x.new_tensor(mean), x.new_tensor(std)
    if m.dim():
        if m.numel() != x.shape[-3] or s.numel() != x.shape[-3]:
            raise ValueError(
                f"{m.numel()} mean / {s.numel()} std values for "
                f"{x.shape[-3]} channels of {tuple(x.shape)}"
            )
        m, s = m.view(-1, 1, 1), s.view(-1, 1, 1)
    return (x - m) / s


def normalize_uint8(x: Tensor, modality: str = "rgb") -> Tensor:
    """uint8 ``(..., C, H, W)`` -> float32 ``(x / 255 - mean) / std`` of ``modality``
    (:func:`modality_stats`) on ``x``'s device: the arithmetic of
    :class:`~tsm_apps.data.transforms.ToTensor` then :func:`normalize`, bit for bit. The 255 is
    a tensor on that device because CUDA divides by a CPU scalar through its reciprocal,
    which can round differently in the last bit."""
    if not torch.is_tensor(x) or x.dtype != torch.uint8 or x.dim() < 3:
        got = f"{x.dtype} {tuple(x.shape)}" if torch.is_tensor(x) else type(x).__name__
        raise ValueError(f"normalize_uint8 expects a uint8 tensor (..., C, H, W), got {got}")
    y = x.float()
    return normalize(y.div_(y.new_tensor(255.0)), *modality_stats(modality))
