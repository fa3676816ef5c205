"""I3D-style inflation: the 3D-convolution counterpart of a TSM model ("I3D-replace").

Each shifted 1x1 conv (``TemporalShift(conv1)`` in ``blockres`` placement) becomes a 3x1x1
temporal convolution over the clip, so the two models have the same backbone and differ only
in how time is mixed: zero-FLOP shift vs. a temporal kernel.
"""
from __future__ import annotations

import torch
from torch import Tensor, nn

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
        self.conv = nn.Conv3d(conv2d.in_channels, conv2d.out_channels, (3, 1, 1),
                              (1,) + conv2d.stride, (1, 0, 0), bias=conv2d.bias is not None)
        with torch.no_grad():
            self.conv.weight.zero_()
            self.conv.weight[:, :, 1] = conv2d.weight
            if conv2d.bias is not None:
                self.conv.bias.copy_(conv2d.bias)

    def forward(self, x: Tensor) -> Tensor:
        nt, c, h, w = x.shape
        t = self.num_segments
        if nt % t:
            raise ValueError(f"TemporalConv: shape {tuple(x.shape)} not divisible by T={t}")
        v = x.reshape(nt // t, t, c, h, w).transpose(1, 2)
        y = self.conv(v)
        return y.transpose(1, 2).reshape(nt, y.shape[1], y.shape[3], y.shape[4])


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
