"""Input modalities: RGB (3 channels) and stacked optical flow (``2 * new_length`` channels).

A flow segment is ``new_length`` consecutive flow fields, each an x and a y map, stacked as
channels ``[x_1, y_1, x_2, y_2, ...]`` (TSN/TSM ``TSNDataSet``): a flow clip is
``(N, T, 2 * new_length, H, W)`` where the official code feeds ``(N, T * 2 * new_length, H, W)``.

TSN's cross-modality initialisation (official TSM ``ops/models.py``, ``_construct_flow_model``):
the first conv's RGB kernel ``(O, 3, k, k)`` is averaged over its colour channels and
replicated to ``(O, 2 * new_length, k, k)``. It applies to ImageNet weights and, for AAVG's
RGB->flow transfer learning, to the first conv of an RGB-trained recognizer.
"""

from __future__ import annotations

from typing import Mapping

import torch
from torch import Tensor, nn

MODALITIES = ("rgb", "flow")
FIRST_CONV_KEYS = ("backbone.conv1.weight", "backbone.features.0.0.weight")  # ResNet, MobileNetV2


def cross_modality_weight(weight: Tensor, in_channels: int) -> Tensor:
    """``(O, C, k, k)`` kernel -> ``(O, in_channels, k, k)``: mean over ``C``, replicated."""
    if weight.dim() != 4:
        raise ValueError(f"expected a conv kernel (O, C, kh, kw), got {tuple(weight.shape)}")
    if weight.shape[1] == in_channels:
        return weight.clone()
    shape = (weight.shape[0], in_channels) + tuple(weight.shape[2:])
    return weight.mean(dim=1, keepdim=True).expand(shape).contiguous()


def first_conv(trunk: nn.Module) -> tuple:
    """``(parent module, attribute name, conv)`` of a ResNet or MobileNetV2 trunk's first conv."""
    if isinstance(getattr(trunk, "conv1", None), nn.Conv2d):
        return trunk, "conv1", trunk.conv1
    features = getattr(trunk, "features", None)
    if features is not None and isinstance(features[0][0], nn.Conv2d):
        return features[0], "0", features[0][0]
    raise TypeError(
        f"no first conv found in {type(trunk).__name__} (ResNet conv1 or "
        f"MobileNetV2 features[0][0] expected)"
    )


@torch.no_grad()
def set_input_channels(trunk: nn.Module, in_channels: int) -> nn.Module:
    """Replace the trunk's first conv by one taking ``in_channels``, cross-modality initialised
    from the current weights (a no-op at the current channel count). Returns ``trunk``."""
    parent, name, conv = first_conv(trunk)
    if conv.in_channels == in_channels:
        return trunk
    new = nn.Conv2d(
        in_channels,
        conv.out_channels,
        conv.kernel_size,
        conv.stride,
        conv.padding,
        conv.dilation,
        conv.groups,
        conv.bias is not None,
    )
    new.weight.copy_(cross_modality_weight(conv.weight, in_channels))
    if conv.bias is not None:
        new.bias.copy_(conv.bias)
    new.to(device=conv.weight.device, dtype=conv.weight.dtype)
    setattr(parent, name, new)
    return trunk


def rgb_to_flow_state(sd: Mapping[str, Tensor], in_channels: int) -> dict:
    """A recognizer state dict (our keys) with its first conv cross-modality initialised for
    ``in_channels``; every other tensor unchanged (RGB->flow transfer)."""
    out = dict(sd)
    keys = [k for k in FIRST_CONV_KEYS if k in out]
    if not keys:
        raise ValueError(f"no first conv in the state dict (expected one of {FIRST_CONV_KEYS})")
    out[keys[0]] = cross_modality_weight(out[keys[0]], in_channels)
    return out
