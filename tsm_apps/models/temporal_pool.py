"""Temporal pooling between stages (the official ``temporal_pool`` option)."""

from __future__ import annotations

from torch import Tensor, nn

from .clip_layout import to_clips, to_frames


class TemporalPool(nn.Module):
    """Max-pool over time (kernel 3, stride 2, padding 1) before ``net`` (official ``temporal_pool``).

    Input ``(N*T, C, H, W)`` -> ``net`` applied to ``(N*T//2, C, H, W)``.
    """

    def __init__(self, net: nn.Module, num_segments: int) -> None:
        super().__init__()
        self.net = net
        self.num_segments = num_segments

    def forward(self, x: Tensor) -> Tensor:
        v = to_clips(x, self.num_segments, "TemporalPool")
        return self.net(to_frames(nn.functional.max_pool3d(v, (3, 1, 1), (2, 1, 1), (1, 0, 0))))
