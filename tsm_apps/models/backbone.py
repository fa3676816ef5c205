"""TSM / TSN backbones: the 2D trunks of :mod:`.trunk` with temporal shift inserted
(:mod:`.shift.placement`).

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

from .non_local import NonLocalWrapper
from .online import online_modules
from .shift import DEFAULT_FOLD_DIV, TemporalShift
from .shift.placement import shift_mobilenet_blocks, shift_resnet_blocks
from .shift.state import ShiftState, stepping
from .temporal_pool import TemporalPool
from .trunk import (
    DEFAULT_NORM_GROUPS,
    NORMS,
    RESNET_SPECS,
    MobileNetV2,
    ResNet,
    set_memory_format,
)

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
    norm: str = "batch"
    norm_groups: int = DEFAULT_NORM_GROUPS

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
        if self.norm not in NORMS:
            raise ValueError(f"norm must be one of {NORMS}, got {self.norm!r}")
        if self.norm != "batch" and self.arch == "mobilenetv2":
            raise ValueError(f"norm={self.norm!r} is defined for ResNets only")
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


def _online(cfg: BackboneConfig) -> bool:
    return cfg.shift == "online"


def _stage_segments(cfg: BackboneConfig) -> list:
    t = cfg.num_segments
    return [t, t // 2, t // 2, t // 2] if cfg.temporal_pool else [t] * 4


def add_non_local_to_resnet(net: ResNet, cfg: BackboneConfig) -> None:
    """Official 5-block placement for ResNet-50: layer2 blocks 0, 2 and layer3 blocks 0, 2, 4."""
    segs = _stage_segments(cfg)
    for stage, idx, t in ((net.layer2, (0, 2), segs[1]), (net.layer3, (0, 2, 4), segs[2])):
        for i in idx:
            stage[i] = NonLocalWrapper(stage[i], _block_out(stage[i]), t)


def _block_out(block: nn.Module) -> int:
    b = block.net if isinstance(block, TemporalShift) else block
    return (b.bn3 if hasattr(b, "bn3") else b.bn2).num_features


def build_trunk(cfg: BackboneConfig) -> nn.Module:
    """Build the 2D trunk and insert shift, temporal pool and non-local blocks per ``cfg``.

    The trunk runs in :data:`DEFAULT_MEMORY_FORMAT` (see :func:`set_memory_format`)."""
    if cfg.arch == "mobilenetv2":
        if cfg.temporal_pool or cfg.non_local:
            raise ValueError("temporal_pool/non_local are defined for ResNets only")
        net = MobileNetV2(cfg.width)
        if cfg.shift:
            shift_mobilenet_blocks(net.features, cfg.num_segments, cfg.fold_div, _online(cfg))
        return set_memory_format(net, DEFAULT_MEMORY_FORMAT)
    net = ResNet(cfg.arch, cfg.width, cfg.strides, cfg.dilations, cfg.norm, cfg.norm_groups)
    if cfg.shift:
        shift_resnet_blocks(net.stages, _stage_segments(cfg), cfg.fold_div, _online(cfg), cfg.place)
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
    """Multi-level feature extractor for dense tasks (detection): the one TSM backbone of the
    suite (the mmdet adapter ``detection.backbone.TSMResNet`` is this class with mmdet's
    freezing and weight loading).

    Clip mode: input ``(N*T, 3, H, W)`` with the ``T = num_segments`` frames of each clip
    contiguous; output a tuple of the stage maps in ``out_indices`` (ResNets: stage 0..3 =
    res2..res5, strides 4/8/16/32 before dilation); MobileNetV2 returns its last map.
    Streaming (online TSM or TSN): :meth:`step` takes one frame per stream ``(S, 3, H, W)`` and
    the streams' :class:`~tsm_apps.models.shift.state.ShiftState`, so frame-by-frame outputs
    equal the whole-clip outputs of the causal shift.
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

    @property
    def num_segments(self) -> int:
        return self.cfg.num_segments

    def set_num_segments(self, num_segments: int) -> None:
        """Change ``T`` of every shift module (e.g. a different clip length at test time)."""
        if num_segments < 1:
            raise ValueError(f"num_segments must be >= 1, got {num_segments}")
        set_num_segments(self.trunk, num_segments)
        self.cfg.num_segments = num_segments

    def forward(self, x: Tensor) -> tuple:
        """``(N*T, 3, H, W)`` clips -> tuple of maps (one frame per stream: :meth:`step`)."""
        who = type(self).__name__
        if not isinstance(x, Tensor):
            raise TypeError(f"{who} expects a Tensor, got {type(x).__name__}")
        if x.dim() != 4 or x.shape[1] != 3:
            raise ValueError(f"{who} expects (N*T, 3, H, W), got {tuple(x.shape)}")
        if x.shape[0] % self.num_segments:
            raise ValueError(
                f"{who}: batch of {x.shape[0]} frames (shape {tuple(x.shape)}) "
                f"is not a whole number of clips of num_segments={self.num_segments}"
            )
        return self.stages(x)

    def stages(self, x: Tensor) -> tuple:
        """The maps of ``out_indices`` for ``x`` (no shape check: clips, or one frame per stream
        inside a :func:`~tsm_apps.models.shift.state.stepping` block)."""
        if self.cfg.arch == "mobilenetv2":
            return (self.trunk(x),)
        outs = self.trunk.forward_stages(x)
        return tuple(outs[i] for i in self.out_indices)

    @property
    def shift_modules(self) -> list:
        """The shift modules a stream's state belongs to (``[]`` for TSN: nothing carried);
        ValueError for ``shift='offline'``, which cannot stream."""
        if self.cfg.shift == "offline":
            raise ValueError(
                "streaming needs shift='online' (causal) or None; this backbone "
                "was built with shift='offline'"
            )
        return online_modules(self.trunk)

    def new_state(self) -> ShiftState:
        """A stream's state before its first frame (zeros)."""
        return ShiftState(len(self.shift_modules))

    def step(self, x: Tensor, state: ShiftState) -> tuple:
        """One frame per stream ``(S, 3, H, W)`` -> the stage maps; ``state`` (``S`` rows, or
        empty before the first frame) is advanced in place."""
        if not isinstance(x, Tensor) or x.dim() != 4 or x.shape[1] != 3:
            who = type(self).__name__
            raise ValueError(f"{who}.step expects (S, 3, H, W), got {getattr(x, 'shape', x)}")
        with stepping(self.shift_modules, state):
            return self.stages(x)


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
