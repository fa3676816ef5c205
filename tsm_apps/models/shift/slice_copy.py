"""The shift written with strided slice copies (the CPU path of :mod:`.op`), and with
``torch.cat`` for tracing / ONNX export.

Layout: ``(N*T, C, H, W)``, viewed without a copy as ``(N, T, C, H*W)`` (NCHW) or
``(N, T, H*W, C)`` (channels-last) so that channels stay where memory has them. The values
are exactly those of the official ``zeros_like`` + slice-copy shift.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .memory_format import is_channels_last

OFFLINE, ONLINE = (1, -1), (-1,)
"""Per fold, where its channels come from: ``+1`` the next frame, ``-1`` the previous one."""


def frames_view(x: Tensor, t: int) -> tuple:
    """Copy-free 4-D view of ``(N*T, C, H, W)``: ``(N, T, C, H*W)`` or ``(N, T, H*W, C)``.

    Returns ``(view, channel_dim)``; a tensor in neither memory format is made contiguous.
    """
    nt, c, h, w = x.shape
    if is_channels_last(x):
        return x.permute(0, 2, 3, 1).reshape(nt // t, t, h * w, c), 3
    return x.contiguous().view(nt // t, t, c, h * w), 2


def unframe(v: Tensor, shape: torch.Size, cdim: int) -> Tensor:
    """The ``(N*T, C, H, W)`` tensor of shape ``shape`` behind a :func:`frames_view` layout."""
    nt, c, h, w = shape
    if cdim == 3:
        return v.view(nt, h, w, c).permute(0, 3, 1, 2)
    return v.view(nt, c, h, w)


def at(cdim: int, frames: slice, chans: slice) -> tuple:
    """Index of ``frames`` (dim 1) and ``chans`` (dim ``cdim``) in a :func:`frames_view`."""
    return (slice(None), frames) + (slice(None),) * (cdim - 2) + (chans,)


def shift_folds(out: Tensor, v: Tensor, fold: int, dirs: tuple, cdim: int) -> None:
    """Write the shifted folds of ``v`` into channels ``[0:len(dirs)*fold]`` of ``out``."""
    for k, d in enumerate(dirs):
        ch = slice(k * fold, (k + 1) * fold)
        if d > 0:
            dst, src, edge = slice(0, -1), slice(1, None), slice(-1, None)
        else:
            dst, src, edge = slice(1, None), slice(0, -1), slice(0, 1)
        out[at(cdim, dst, ch)] = v[at(cdim, src, ch)]
        out[at(cdim, edge, ch)] = 0


def shift_frames(v: Tensor, fold: int, dirs: tuple, cdim: int) -> Tensor:
    """Shift the folds of ``v`` ``(N, T, ...)`` along dim 1; channels on dim ``cdim`` (2 or 3).

    Fold ``k`` (channels ``[k*fold:(k+1)*fold]``) takes frame ``t + dirs[k]`` (zeros where that
    frame is outside the clip); the channels after the last fold are copied unchanged.
    """
    out = torch.empty_like(v)
    shift_folds(out, v, fold, dirs, cdim)
    rest = at(cdim, slice(None), slice(len(dirs) * fold, None))
    out[rest] = v[rest]
    return out


class CopyShift(torch.autograd.Function):
    """Copy-kernel shift; backward shifts the gradient the opposite way (also a permutation)."""

    @staticmethod
    def forward(ctx, x: Tensor, t: int, fold: int, dirs: tuple) -> Tensor:
        ctx.t, ctx.fold, ctx.dirs = t, fold, dirs
        v, cdim = frames_view(x, t)
        return unframe(shift_frames(v, fold, dirs, cdim), x.shape, cdim)

    @staticmethod
    def backward(ctx, g: Tensor) -> tuple:
        v, cdim = frames_view(g, ctx.t)
        back = tuple(-d for d in ctx.dirs)
        return unframe(shift_frames(v, ctx.fold, back, cdim), g.shape, cdim), None, None, None


def shift_cat(x: Tensor, t: int, fold: int, online: bool) -> Tensor:
    """The same shift written with ``torch.cat`` (for tracing / ONNX export)."""
    nt, c, h, w = x.shape
    v = x.reshape(nt // t, t, c, h, w)
    zero = v.new_zeros(v.shape[0], 1, fold, h, w)
    if online:
        past = torch.cat([zero, v[:, :-1, :fold]], dim=1)
        out = torch.cat([past, v[:, :, fold:]], dim=2)
    else:
        future = torch.cat([v[:, 1:, :fold], zero], dim=1)
        past = torch.cat([zero, v[:, :-1, fold : 2 * fold]], dim=1)
        out = torch.cat([future, past, v[:, :, 2 * fold :]], dim=2)
    return out.reshape(nt, c, h, w)
