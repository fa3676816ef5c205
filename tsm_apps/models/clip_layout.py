"""Between the 2-D trunk's frame layout ``(N*T, C, H, W)`` and the 3-D clip layout
``(N, C, T, H, W)`` (views: no copy)."""

from __future__ import annotations

from torch import Tensor


def to_clips(x: Tensor, num_segments: int, who: str) -> Tensor:
    """``(N*T, C, H, W)`` -> ``(N, C, T, H, W)``; ``who`` names the caller in the error."""
    nt, c, h, w = x.shape
    if nt % num_segments:
        raise ValueError(f"{who}: shape {tuple(x.shape)} not divisible by T={num_segments}")
    return x.reshape(nt // num_segments, num_segments, c, h, w).transpose(1, 2)


def to_frames(v: Tensor) -> Tensor:
    """``(N, C, T, H, W)`` -> ``(N*T, C, H, W)``."""
    n, c, t, h, w = v.shape
    return v.transpose(1, 2).reshape(n * t, c, h, w)
