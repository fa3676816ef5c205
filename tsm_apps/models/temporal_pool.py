"""Temporal pooling between stages (the official ``temporal_pool`` option)."""
from __future__ import annotations

from torch import Tensor, nn


class TemporalPool(nn.Module):
    """Max-pool over time (kernel 3, stride 2, padding 1) before ``net`` (official ``temporal_pool``).

    Input ``(N*T, C, H, W)`` -> ``net`` applied to ``(N*T//2, C, H, W)``.
    """

    def __init__(self, net: nn.Module, num_segments: int) -> None:
        super().__init__()
        self.net = net
        self.num_segments = num_segments

    def forward(self, x: Tensor) -> Tensor:
        nt, c, h, w = x.shape
        t = self.num_segments
        if nt % t:
            raise ValueError(f"TemporalPool: shape {tuple(x.shape)} not divisible by T={t}")
        v = x.reshape(nt // t, t, c, h, w).transpose(1, 2)
        v = nn.functional.max_pool3d(v, (3, 1, 1), (2, 1, 1), (1, 0, 0))
        return self.net(v.transpose(1, 2).reshape(-1, c, h, w))
