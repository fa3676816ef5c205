"""2D trunks: torchvision ResNet and MobileNetV2 feature extractors, without temporal modules.

Input ``(N*T, 3, H, W)`` (the frames of a clip are independent images here); output
``(N*T, C, h, w)``. Module names follow torchvision (``conv1``, ``bn1``, ``layer1.0.conv1`` ...),
so torchvision and official TSM checkpoints map by prefix. ``width`` scales every stage's channel
count (``width=0.25`` gives a 16-32-64-128 ResNet); ResNet stages take a stride and a dilation
each. :mod:`.backbone` inserts the shift, temporal pool and non-local blocks into these trunks.

``norm`` picks the ResNet's normalisation layers: ``'batch'`` (BatchNorm, torchvision's; its
statistics are those of the whole ``N*T`` batch while training) or ``'group'`` (GroupNorm with
``norm_groups`` groups: statistics of each frame alone, the same in training and at test).
"""

from __future__ import annotations

from functools import partial
from typing import Sequence

import torch
from torch import Tensor, nn
from torchvision.models import mobilenet_v2
from torchvision.models.resnet import BasicBlock, Bottleneck

RESNET_SPECS = {
    "resnet18": (BasicBlock, (2, 2, 2, 2)),
    "resnet34": (BasicBlock, (3, 4, 6, 3)),
    "resnet50": (Bottleneck, (3, 4, 6, 3)),
    "resnet101": (Bottleneck, (3, 4, 23, 3)),
    "resnet152": (Bottleneck, (3, 8, 36, 3)),
}


NORMS = ("batch", "group")
DEFAULT_NORM_GROUPS = 32
"""GroupNorm's groups per layer (Wu & He 2018's default); a layer with fewer channels gets one
group per channel."""


def norm_layer(norm: str, channels: int, groups: int = DEFAULT_NORM_GROUPS) -> nn.Module:
    """The normalisation of ``channels`` feature maps: ``BatchNorm2d`` (``norm='batch'``) or
    ``GroupNorm`` with ``min(groups, channels)`` groups (``norm='group'``; ``channels`` must be a
    multiple of it)."""
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
    if norm == "batch":
        return nn.BatchNorm2d(channels)
    if groups < 1:
        raise ValueError(f"norm_groups must be >= 1, got {groups}")
    g = min(groups, channels)
    if channels % g:
        raise ValueError(f"GroupNorm: {channels} channels do not split into {g} groups")
    return nn.GroupNorm(g, channels)


def _channels(base: int, width: float) -> int:
    return max(int(round(base * width)), 8)


def _dilate(block: nn.Module, dilation: int) -> None:
    """Give every 3x3 conv of a torchvision block the dilation (and matching padding)."""
    for conv in block.modules():
        if isinstance(conv, nn.Conv2d) and conv.kernel_size == (3, 3):
            conv.dilation, conv.padding = (dilation, dilation), (dilation, dilation)


class ResNet(nn.Module):
    """torchvision ResNet trunk (no pooling/fc) with a channel ``width`` and per-stage stride/dilation.

    ``forward_stages(x)`` returns the four stage outputs ``[(N*T, C_i, h_i, w_i)]``. ``norm`` /
    ``norm_groups``: every normalisation layer, :func:`norm_layer`.
    """

    def __init__(
        self,
        arch: str = "resnet50",
        width: float = 1.0,
        strides: Sequence[int] = (1, 2, 2, 2),
        dilations: Sequence[int] = (1, 1, 1, 1),
        norm: str = "batch",
        norm_groups: int = DEFAULT_NORM_GROUPS,
    ) -> None:
        super().__init__()
        self.memory_format = torch.contiguous_format
        block, layers = RESNET_SPECS[arch]
        make_norm = partial(norm_layer, norm, groups=norm_groups)
        stem = _channels(64, width)
        self.conv1 = nn.Conv2d(3, stem, 7, 2, 3, bias=False)
        self.bn1 = make_norm(stem)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        inplanes = stem
        self.stage_channels = []
        for i, (n, s, d) in enumerate(zip(layers, strides, dilations)):
            planes = _channels(64 * 2**i, width)
            blocks = []
            for j in range(n):
                stride = s if j == 0 else 1
                down = None
                if j == 0 and (stride != 1 or inplanes != planes * block.expansion):
                    down = nn.Sequential(
                        nn.Conv2d(inplanes, planes * block.expansion, 1, stride, bias=False),
                        make_norm(planes * block.expansion),
                    )
                b = block(inplanes, planes, stride, down, norm_layer=make_norm)
                if d > 1:
                    _dilate(b, d)
                blocks.append(b)
                inplanes = planes * block.expansion
            setattr(self, f"layer{i + 1}", nn.Sequential(*blocks))
            self.stage_channels.append(inplanes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
        self.out_channels = inplanes

    @property
    def stages(self) -> list:
        return [self.layer1, self.layer2, self.layer3, self.layer4]

    def forward_stages(self, x: Tensor) -> list:
        x = x.contiguous(memory_format=self.memory_format)
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        outs = []
        for stage in self.stages:
            x = stage(x)
            outs.append(x)
        return outs

    def forward(self, x: Tensor) -> Tensor:
        return self.forward_stages(x)[-1]


class MobileNetV2(nn.Module):
    """torchvision MobileNetV2 feature trunk; shift before the first (expansion) conv of residual blocks."""

    def __init__(self, width: float = 1.0) -> None:
        super().__init__()
        self.memory_format = torch.contiguous_format
        self.features = mobilenet_v2(weights=None, width_mult=width).features
        self.out_channels = self.features[-1][0].out_channels

    def forward(self, x: Tensor) -> Tensor:
        return self.features(x.contiguous(memory_format=self.memory_format))


def zero_init_residual_(model: nn.Module) -> int:
    """Start every residual block of ``model``'s ResNets as the identity: the weight (gamma) of
    the last normalisation layer of each residual branch -- ``bn3`` of a bottleneck, ``bn2`` of a
    basic block -- is set to 0 (SlowFast's ``ZERO_INIT_FINAL_BN``, torchvision's
    ``zero_init_residual``), in place. Returns how many layers were set; ValueError when
    ``model`` has no residual block (MobileNetV2)."""
    last = [
        m.bn3 if isinstance(m, Bottleneck) else m.bn2
        for m in model.modules()
        if isinstance(m, (Bottleneck, BasicBlock))
    ]
    if not last:
        raise ValueError(f"zero_init_residual: {type(model).__name__} has no ResNet block")
    with torch.no_grad():
        for norm in last:
            norm.weight.zero_()
    return len(last)


def set_memory_format(trunk: nn.Module, memory_format: torch.memory_format) -> nn.Module:
    """Run ``trunk`` (a :class:`ResNet` or :class:`MobileNetV2`) in ``memory_format``.

    ``torch.channels_last`` or ``torch.contiguous_format``: the trunk's 4-D weights are stored in
    that format and its input is converted on entry, so every activation ``(N*T, C, H, W)`` has it.
    Values agree across formats up to float rounding (the conv kernels differ).
    """
    if memory_format not in (torch.channels_last, torch.contiguous_format):
        raise ValueError(
            f"memory_format must be channels_last or contiguous_format, got {memory_format}"
        )
    trunk.memory_format = memory_format
    for p in trunk.parameters():
        if p.dim() == 4:
            p.data = p.data.contiguous(memory_format=memory_format)
    return trunk
