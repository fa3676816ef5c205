"""The temporal shift: a zero-FLOP, zero-parameter exchange of channels between frames.

Layout everywhere: ``(N*T, C, H, W)`` with the ``T`` frames of one clip contiguous.

* offline (bi-directional): channels ``[0:fold]`` take frame ``t+1``, channels
  ``[fold:2*fold]`` take frame ``t-1``, the rest stay; zeros at clip boundaries.
* online (uni-directional, causal): channels ``[0:fold]`` take frame ``t-1`` (zeros at the
  first frame of a clip), the rest stay. This is the layout of the official online demo.

The op is written with ``torch.cat`` of slices and zeros, never slice assignment, so it is
differentiable, never mutates its input and traces to ONNX correctly for any batch size.
"""
from __future__ import annotations

import torch
from torch import Tensor, nn

DEFAULT_FOLD_DIV = 8


def _check(x: Tensor, num_segments: int, fold_div: int) -> int:
    if not isinstance(x, Tensor):
        raise TypeError(f"temporal_shift expects a Tensor, got {type(x).__name__}")
    if x.dim() != 4:
        raise ValueError(f"temporal_shift expects (N*T, C, H, W), got shape {tuple(x.shape)}")
    if num_segments < 1:
        raise ValueError(f"num_segments must be >= 1, got {num_segments}")
    if x.shape[0] % num_segments != 0:
        raise ValueError(
            f"temporal_shift: batch dim {x.shape[0]} of shape {tuple(x.shape)} is not a multiple "
            f"of num_segments={num_segments}")
    fold = x.shape[1] // fold_div if fold_div > 0 else 0
    if fold < 1:
        raise ValueError(
            f"temporal_shift: fold_div={fold_div} leaves no channel to shift for C={x.shape[1]} "
            f"(shape {tuple(x.shape)})")
    return fold


def temporal_shift(x: Tensor, num_segments: int, fold_div: int = DEFAULT_FOLD_DIV,
                   online: bool = False) -> Tensor:
    """Shift channels along time.

    Args:
        x: ``(N*T, C, H, W)``, frames of one clip contiguous.
        num_segments: ``T``.
        fold_div: ``fold = C // fold_div`` channels move per direction.
        online: causal shift (past frames only) instead of bi-directional.

    Returns:
        A new tensor of the same shape.
    """
    fold = _check(x, num_segments, fold_div)
    nt, c, h, w = x.shape
    v = x.reshape(nt // num_segments, num_segments, c, h, w)
    zero = v.new_zeros(v.shape[0], 1, fold, h, w)
    if online:
        past = torch.cat([zero, v[:, :-1, :fold]], dim=1)
        out = torch.cat([past, v[:, :, fold:]], dim=2)
    else:
        future = torch.cat([v[:, 1:, :fold], zero], dim=1)
        past = torch.cat([zero, v[:, :-1, fold:2 * fold]], dim=1)
        out = torch.cat([future, past, v[:, :, 2 * fold:]], dim=2)
    return out.reshape(nt, c, h, w)


def online_shift_step(x: Tensor, buffer: Tensor | None,
                      fold_div: int = DEFAULT_FOLD_DIV) -> tuple[Tensor, Tensor]:
    """One streaming step of the online shift.

    Args:
        x: ``(N, C, H, W)``, the current frame of ``N`` independent streams.
        buffer: ``(N, C // fold_div, H, W)`` channels ``[0:fold]`` of the previous frame, or
            ``None`` at the first frame (zeros).

    Returns:
        ``(shifted (N, C, H, W), new_buffer (N, fold, H, W))``.
    """
    fold = _check(x, 1, fold_div)
    if buffer is None:
        buffer = x.new_zeros(x.shape[0], fold, x.shape[2], x.shape[3])
    elif buffer.shape != (x.shape[0], fold, x.shape[2], x.shape[3]):
        raise ValueError(f"shift buffer shape {tuple(buffer.shape)} does not match frame "
                         f"{tuple(x.shape)} with fold {fold}")
    return torch.cat([buffer, x[:, fold:]], dim=1), x[:, :fold]


class TemporalShift(nn.Module):
    """Shift the input of ``net`` (official wrapper layout: the wrapped module is ``.net``).

    ``num_segments`` may be changed at run time (multigrid). In streaming mode (see
    :func:`tsm_apps.models.online.streaming`) each call receives one frame per stream, ``(N, C, H, W)``,
    and the module keeps the previous frame's shifted channels in ``buffer``.
    """

    def __init__(self, net: nn.Module, num_segments: int = 8, fold_div: int = DEFAULT_FOLD_DIV,
                 online: bool = False) -> None:
        super().__init__()
        self.net = net
        self.num_segments = num_segments
        self.fold_div = fold_div
        self.online = online
        self.streaming = False
        self.buffer: Tensor | None = None

    def forward(self, x: Tensor) -> Tensor:
        if self.streaming:
            x, self.buffer = online_shift_step(x, self.buffer, self.fold_div)
        else:
            x = temporal_shift(x, self.num_segments, self.fold_div, self.online)
        return self.net(x)

    def extra_repr(self) -> str:
        mode = "online" if self.online else "offline"
        return f"num_segments={self.num_segments}, fold_div={self.fold_div}, {mode}"


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
