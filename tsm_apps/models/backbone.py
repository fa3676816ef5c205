"""TSM / TSN backbones: torchvision ResNet and MobileNetV2 definitions with temporal shift.

Input ``(N*T, 3, H, W)`` with the ``T`` frames of a clip contiguous. Module names follow
torchvision (``conv1``, ``bn1``, ``layer1.0.conv1`` ...) and the official TSM wrappers
(``layer1.0.conv1.net`` for a shifted conv), so official checkpoints map by prefix only.

``width`` scales every stage's channel count (``width=0.25`` gives a 16-32-64-128 ResNet) so
narrow models train on CPU in minutes. ``shift=None`` is the TSN baseline with identical
parameters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import torch
from torch import Tensor, nn
from torchvision.models import mobilenet_v2
from torchvision.models.resnet import BasicBlock, Bottleneck

from .non_local import NonLocalWrapper
from .shift import DEFAULT_FOLD_DIV
from .shift_wrapper import TemporalShift
from .temporal_pool import TemporalPool

RESNET_SPECS = {
    "resnet18": (BasicBlock, (2, 2, 2, 2)),
    "resnet34": (BasicBlock, (3, 4, 6, 3)),
    "resnet50": (Bottleneck, (3, 4, 6, 3)),
    "resnet101": (Bottleneck, (3, 4, 23, 3)),
    "resnet152": (Bottleneck, (3, 8, 36, 3)),
}
ARCHS = tuple(RESNET_SPECS) + ("mobilenetv2",)
DEFAULT_MEMORY_FORMAT = torch.channels_last
"""Trunks run channels-last by default: faster on CPU for TSN and TSM alike, with a shift written
for that layout (measured by ``tsm bench``; docs/experiments/performance.md)."""
SHIFT_MODES = ("offline", "online", None)


@dataclass
class BackboneConfig:
    """Everything that defines a backbone; saved in checkpoints."""

    arch: str = "resnet50"
    num_segments: int = 8
    shift: Optional[str] = "offline"
    fold_div: int = DEFAULT_FOLD_DIV
    place: str = "blockres"
    temporal_pool: bool = False
    non_local: bool = False
    width: float = 1.0
    strides: tuple = (1, 2, 2, 2)
    dilations: tuple = (1, 1, 1, 1)

    def __post_init__(self) -> None:
        if self.arch not in ARCHS:
            raise ValueError(f"unknown arch {self.arch!r}; expected one of {ARCHS}")
        if self.shift not in SHIFT_MODES:
            raise ValueError(f"shift must be one of {SHIFT_MODES}, got {self.shift!r}")
        if self.place not in ("blockres", "block"):
            raise ValueError(f"place must be 'blockres' or 'block', got {self.place!r}")
        if self.non_local and self.arch != "resnet50":
            raise ValueError("non_local blocks are defined for resnet50 only")
        if self.temporal_pool and self.num_segments % 2:
            raise ValueError(f"temporal_pool needs an even num_segments, got {self.num_segments}")
        if self.width <= 0:
            raise ValueError(f"width must be > 0, got {self.width}")
        self.strides, self.dilations = tuple(self.strides), tuple(self.dilations)


OUTPUT_STRIDES = {
    32: ((1, 2, 2, 2), (1, 1, 1, 1)),
    16: ((1, 2, 2, 1), (1, 1, 1, 2)),
    8: ((1, 2, 1, 1), (1, 1, 2, 4)),
}
"""ResNet stage strides and dilations for an output stride (16: res5 at stride 1, dilation 2, as
in the VID detection recipe; finer maps for CAMs at the same receptive field)."""


def stage_strides(output_stride: int) -> tuple:
    """``(strides, dilations)`` of the four ResNet stages for ``output_stride`` 32, 16 or 8."""
    if output_stride not in OUTPUT_STRIDES:
        raise ValueError(
            f"output_stride must be one of {sorted(OUTPUT_STRIDES)}, got {output_stride}"
        )
    return OUTPUT_STRIDES[output_stride]


def _channels(base: int, width: float) -> int:
    return max(int(round(base * width)), 8)


def _dilate(block: nn.Module, dilation: int) -> None:
    """Give every 3x3 conv of a torchvision block the dilation (and matching padding)."""
    for conv in block.modules():
        if isinstance(conv, nn.Conv2d) and conv.kernel_size == (3, 3):
            conv.dilation, conv.padding = (dilation, dilation), (dilation, dilation)


class ResNet(nn.Module):
    """torchvision ResNet trunk (no pooling/fc) with a channel ``width`` and per-stage stride/dilation.

    ``forward_stages(x)`` returns the four stage outputs ``[(N*T, C_i, h_i, w_i)]``.
    """

    def __init__(
        self,
        arch: str = "resnet50",
        width: float = 1.0,
        strides: Sequence[int] = (1, 2, 2, 2),
        dilations: Sequence[int] = (1, 1, 1, 1),
    ) -> None:
        super().__init__()
        self.memory_format = torch.contiguous_format
        block, layers = RESNET_SPECS[arch]
        stem = _channels(64, width)
        self.conv1 = nn.Conv2d(3, stem, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(stem)
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
                        nn.BatchNorm2d(planes * block.expansion),
                    )
                b = block(inplanes, planes, stride, down)
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


def _stage_segments(cfg: BackboneConfig) -> list:
    t = cfg.num_segments
    return [t, t // 2, t // 2, t // 2] if cfg.temporal_pool else [t] * 4


def add_shift_to_resnet(net: ResNet, cfg: BackboneConfig) -> None:
    """Insert shifts as the official ``make_temporal_shift``: every block, every other from ResNet-101."""
    n_round = 2 if len(net.layer3) >= 23 else 1
    online = cfg.shift == "online"
    for stage, t in zip(net.stages, _stage_segments(cfg)):
        for i, b in enumerate(stage):
            if i % n_round:
                continue
            if cfg.place == "blockres":
                b.conv1 = TemporalShift(b.conv1, t, cfg.fold_div, online)
            else:
                stage[i] = TemporalShift(b, t, cfg.fold_div, online)


def add_non_local_to_resnet(net: ResNet, cfg: BackboneConfig) -> None:
    """Official 5-block placement for ResNet-50: layer2 blocks 0, 2 and layer3 blocks 0, 2, 4."""
    segs = _stage_segments(cfg)
    for stage, idx, t in ((net.layer2, (0, 2), segs[1]), (net.layer3, (0, 2, 4), segs[2])):
        for i in idx:
            stage[i] = NonLocalWrapper(stage[i], _block_out(stage[i]), t)


def _block_out(block: nn.Module) -> int:
    b = block.net if isinstance(block, TemporalShift) else block
    return (b.bn3 if hasattr(b, "bn3") else b.bn2).num_features


class MobileNetV2(nn.Module):
    """torchvision MobileNetV2 feature trunk; shift before the first (expansion) conv of residual blocks."""

    def __init__(self, width: float = 1.0) -> None:
        super().__init__()
        self.memory_format = torch.contiguous_format
        self.features = mobilenet_v2(weights=None, width_mult=width).features
        self.out_channels = self.features[-1][0].out_channels

    def forward(self, x: Tensor) -> Tensor:
        return self.features(x.contiguous(memory_format=self.memory_format))


def add_shift_to_mobilenet(net: MobileNetV2, cfg: BackboneConfig) -> None:
    for m in net.features:
        if getattr(m, "use_res_connect", False) and len(m.conv) == 4:
            m.conv[0] = TemporalShift(
                m.conv[0], cfg.num_segments, cfg.fold_div, cfg.shift == "online"
            )


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


def build_trunk(cfg: BackboneConfig) -> nn.Module:
    """Build the 2D trunk and insert shift, temporal pool and non-local blocks per ``cfg``.

    The trunk runs in :data:`DEFAULT_MEMORY_FORMAT` (see :func:`set_memory_format`)."""
    if cfg.arch == "mobilenetv2":
        if cfg.temporal_pool or cfg.non_local:
            raise ValueError("temporal_pool/non_local are defined for ResNets only")
        net = MobileNetV2(cfg.width)
        if cfg.shift:
            add_shift_to_mobilenet(net, cfg)
        return set_memory_format(net, DEFAULT_MEMORY_FORMAT)
    net = ResNet(cfg.arch, cfg.width, cfg.strides, cfg.dilations)
    if cfg.shift:
        add_shift_to_resnet(net, cfg)
    if cfg.non_local:
        add_non_local_to_resnet(net, cfg)
    if cfg.temporal_pool:
        net.layer2 = TemporalPool(net.layer2, cfg.num_segments)
    return set_memory_format(net, DEFAULT_MEMORY_FORMAT)


def set_num_segments(net: nn.Module, num_segments: int, temporal_pool: bool = False) -> None:
    """Change ``T`` of every shift, temporal-pool and non-local module in place (multigrid).

    Modules after a temporal pool see ``T // 2``.
    """
    if temporal_pool and num_segments % 2:
        raise ValueError(f"temporal_pool needs an even num_segments, got {num_segments}")
    pooled = set()
    for m in net.modules():
        if isinstance(m, TemporalPool):
            pooled.update(id(s) for s in m.net.modules())
    for m in net.modules():
        if isinstance(m, (TemporalShift, TemporalPool, NonLocalWrapper)):
            m.num_segments = num_segments // 2 if id(m) in pooled else num_segments


class Backbone(nn.Module):
    """Multi-level feature extractor for dense tasks (detection).

    Input ``(N*T, 3, H, W)``; output a tuple of the stage outputs in ``out_indices``
    (ResNets: stage 0..3, strides 4/8/16/32 before dilation); MobileNetV2 returns its last map.
    """

    def __init__(self, cfg: BackboneConfig, out_indices: Sequence[int] = (0, 1, 2, 3)) -> None:
        super().__init__()
        self.cfg = cfg
        self.trunk = build_trunk(cfg)
        self.out_indices = tuple(out_indices)
        if cfg.arch == "mobilenetv2":
            self.out_channels = (self.trunk.out_channels,)
        else:
            self.out_channels = tuple(self.trunk.stage_channels[i] for i in self.out_indices)

    def forward(self, x: Tensor) -> tuple:
        if x.dim() != 4 or x.shape[1] != 3:
            raise ValueError(f"Backbone expects (N*T, 3, H, W), got {tuple(x.shape)}")
        if self.cfg.arch == "mobilenetv2":
            return (self.trunk(x),)
        outs = self.trunk.forward_stages(x)
        return tuple(outs[i] for i in self.out_indices)


def build_backbone(
    arch: str = "resnet50",
    num_segments: int = 8,
    shift: Optional[str] = "offline",
    fold_div: int = DEFAULT_FOLD_DIV,
    place: str = "blockres",
    width: float = 1.0,
    temporal_pool: bool = False,
    non_local: bool = False,
    strides: Sequence[int] = (1, 2, 2, 2),
    dilations: Sequence[int] = (1, 1, 1, 1),
    out_indices: Sequence[int] = (0, 1, 2, 3),
) -> Backbone:
    """Backbone-only builder. The VID detection recipe uses ``strides=(1, 2, 2, 1)``,
    ``dilations=(1, 1, 1, 2)`` (res5 at stride 16 with dilation 2)."""
    cfg = BackboneConfig(
        arch,
        num_segments,
        shift,
        fold_div,
        place,
        temporal_pool,
        non_local,
        width,
        tuple(strides),
        tuple(dilations),
    )
    return Backbone(cfg, out_indices)
