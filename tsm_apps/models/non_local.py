"""Non-local block (embedded Gaussian, Wang et al. 2018) in the layout of the official TSM repo.

Parameter names follow the official code so its checkpoints load unchanged:
``g.0``, ``theta``, ``phi.0``, ``W.0`` (conv) and ``W.1`` (BN, initialised to zero so a new
block starts as the identity).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


def non_local_attention(theta: Tensor, phi: Tensor, g: Tensor) -> Tensor:
    """Embedded-Gaussian attention. ``theta (B, L, C)``, ``phi (B, C, M)``, ``g (B, M, C)`` -> ``(B, L, C)``."""
    return torch.softmax(theta @ phi, dim=-1) @ g


class NonLocalBlock3D(nn.Module):
    """Residual non-local block on ``(N, C, T, H, W)`` with 1x2x2 max-pool sub-sampling."""

    def __init__(self, in_channels: int) -> None:
        super().__init__()
        self.inter_channels = max(in_channels // 2, 1)
        inter = self.inter_channels
        pool = nn.MaxPool3d(kernel_size=(1, 2, 2))
        self.g = nn.Sequential(nn.Conv3d(in_channels, inter, 1), pool)
        self.theta = nn.Conv3d(in_channels, inter, 1)
        self.phi = nn.Sequential(nn.Conv3d(in_channels, inter, 1), pool)
        self.W = nn.Sequential(nn.Conv3d(inter, in_channels, 1), nn.BatchNorm3d(in_channels))
        nn.init.zeros_(self.W[1].weight)
        nn.init.zeros_(self.W[1].bias)

    def forward(self, x: Tensor) -> Tensor:
        if x.dim() != 5:
            raise ValueError(f"NonLocalBlock3D expects (N, C, T, H, W), got {tuple(x.shape)}")
        n, c = x.shape[:2]
        g = self.g(x).reshape(n, self.inter_channels, -1).transpose(1, 2)
        theta = self.theta(x).reshape(n, self.inter_channels, -1).transpose(1, 2)
        phi = self.phi(x).reshape(n, self.inter_channels, -1)
        y = non_local_attention(theta, phi, g).transpose(1, 2)
        y = y.reshape(n, self.inter_channels, *x.shape[2:])
        return self.W(y) + x


class NonLocalWrapper(nn.Module):
    """Run ``block`` on ``(N*T, C, H, W)`` and then a non-local block over the clip."""

    def __init__(self, block: nn.Module, channels: int, num_segments: int) -> None:
        super().__init__()
        self.block = block
        self.nl = NonLocalBlock3D(channels)
        self.num_segments = num_segments

    def forward(self, x: Tensor) -> Tensor:
        x = self.block(x)
        nt, c, h, w = x.shape
        t = self.num_segments
        if nt % t:
            raise ValueError(f"NonLocalWrapper: shape {tuple(x.shape)} not divisible by T={t}")
        v = x.reshape(nt // t, t, c, h, w).transpose(1, 2)
        return self.nl(v).transpose(1, 2).reshape(nt, c, h, w)
