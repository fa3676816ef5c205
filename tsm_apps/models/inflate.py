"""I3D-style inflation: the 3D-convolution counterpart of a TSM model ("I3D-replace").

:class:`I3D` builds it as a native 3-D network (Conv3d on ``(N, C, T, H, W)`` throughout);
:func:`inflate_shifts` swaps the shifted convs in place inside the 2-D network.

Each shifted 1x1 conv (``TemporalShift(conv1)`` in ``blockres`` placement) becomes a 3x1x1
temporal convolution over the clip, so the two models have the same backbone and differ only
in how time is mixed: zero-FLOP shift vs. a temporal kernel.
"""

from __future__ import annotations

import copy

import torch
from torch import Tensor, nn

from .clip_layout import to_clips, to_frames
from .shift import TemporalShift


class TemporalConv(nn.Module):
    """3x1x1 conv over ``(N*T, C_in, H, W)`` clips -> ``(N*T, C_out, H', W')``.

    Initialised from a 2D conv by centre inflation (the temporal side taps start at zero), so it
    computes what the 2D conv computed on each frame until trained.
    """

    def __init__(self, conv2d: nn.Conv2d, num_segments: int) -> None:
        super().__init__()
        if conv2d.kernel_size != (1, 1):
            raise ValueError(f"inflate expects a 1x1 conv, got kernel {conv2d.kernel_size}")
        self.num_segments = num_segments
        self.conv = nn.Conv3d(
            conv2d.in_channels,
            conv2d.out_channels,
            (3, 1, 1),
            (1,) + conv2d.stride,
            (1, 0, 0),
            bias=conv2d.bias is not None,
        )
        with torch.no_grad():
            self.conv.weight.zero_()
            self.conv.weight[:, :, 1] = conv2d.weight
            if conv2d.bias is not None:
                self.conv.bias.copy_(conv2d.bias)

    def forward(self, x: Tensor) -> Tensor:
        return to_frames(self.conv(to_clips(x, self.num_segments, "TemporalConv")))


def inflate_shifts(model: nn.Module) -> nn.Module:
    """Replace every ``TemporalShift(conv1x1)`` of ``model`` in place by a :class:`TemporalConv`."""
    count = 0
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, TemporalShift):
                if not isinstance(child.net, nn.Conv2d):
                    raise ValueError("inflate_shifts needs 'blockres' placement (shifted convs)")
                setattr(parent, name, TemporalConv(child.net, child.num_segments))
                count += 1
    if count == 0:
        raise ValueError("inflate_shifts: the model has no TemporalShift module")
    return model


def _conv3d(conv: nn.Conv2d) -> nn.Conv3d:
    """A ``k x k`` conv as a ``1 x k x k`` Conv3d with the same weights."""
    c3 = nn.Conv3d(
        conv.in_channels,
        conv.out_channels,
        (1,) + conv.kernel_size,
        (1,) + conv.stride,
        (0,) + conv.padding,
        (1,) + conv.dilation,
        conv.groups,
        conv.bias is not None,
    )
    with torch.no_grad():
        c3.weight.copy_(conv.weight.unsqueeze(2))
        if conv.bias is not None:
            c3.bias.copy_(conv.bias)
    return c3


def _bn3d(bn: nn.BatchNorm2d) -> nn.BatchNorm3d:
    b3 = nn.BatchNorm3d(bn.num_features, bn.eps, bn.momentum, bn.affine, bn.track_running_stats)
    b3.load_state_dict(bn.state_dict())
    return b3


def _to_3d(module: nn.Module) -> None:
    """Replace, in place, every 2-D layer under ``module`` by its 3-D counterpart."""
    for name, child in list(module.named_children()):
        if isinstance(child, TemporalShift):
            if not isinstance(child.net, nn.Conv2d):
                raise ValueError("native_i3d needs 'blockres' placement (shifted convs)")
            new = TemporalConv(child.net, child.num_segments).conv
        elif isinstance(child, nn.Conv2d):
            new = _conv3d(child)
        elif isinstance(child, nn.BatchNorm2d):
            new = _bn3d(child)
        elif isinstance(child, nn.MaxPool2d):
            k, s, p = child.kernel_size, child.stride, child.padding
            new = nn.MaxPool3d((1, k, k), (1, s, s), (0, p, p))
        else:
            _to_3d(child)
            continue
        setattr(module, name, new)


class I3D(nn.Module):
    """The native 3-D twin of a ResNet TSM recognizer ("I3D-replace" built as a 3-D network).

    Every shifted 1x1 conv becomes a centre-inflated 3x1x1 Conv3d, every other ``k x k`` conv a
    ``1 x k x k`` Conv3d, BatchNorm2d -> BatchNorm3d, max-pool ``1 x 3 x 3``. Activations are
    ``(N, C, T, H, W)`` throughout: no per-layer transposes. Input ``(N, T, 3, H, W)`` ->
    logits ``(N, K)``; until the temporal taps train it computes what the 2-D model's TSN twin
    computes.
    """

    def __init__(
        self, recognizer: nn.Module, memory_format: torch.memory_format = torch.contiguous_format
    ) -> None:
        super().__init__()
        trunk = copy.deepcopy(recognizer.backbone)
        if not hasattr(trunk, "stages") or getattr(recognizer.config, "temporal_pool", False):
            raise ValueError("I3D is built from a ResNet recognizer without temporal pooling")
        _to_3d(trunk)
        self.trunk, self.memory_format = trunk, memory_format
        self.dropout = copy.deepcopy(recognizer.dropout)
        self.fc = copy.deepcopy(recognizer.fc)
        for p in self.trunk.parameters():
            if p.dim() == 5:
                p.data = p.data.contiguous(memory_format=memory_format)

    def forward(self, x: Tensor) -> Tensor:
        if x.dim() != 5 or x.shape[2] != 3:
            raise ValueError(f"I3D expects (N, T, 3, H, W), got {tuple(x.shape)}")
        t = self.trunk
        v = x.transpose(1, 2).contiguous(memory_format=self.memory_format)
        v = t.maxpool(t.relu(t.bn1(t.conv1(v))))
        for stage in t.stages:
            v = stage(v)
        return self.fc(self.dropout(v.mean(dim=(2, 3, 4))))
