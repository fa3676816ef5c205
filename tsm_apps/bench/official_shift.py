"""The official shift op re-implemented here (mit-han-lab ``ops/temporal_shift.py``
``TemporalShift.shift``: ``x.view`` + ``zeros_like`` + slice copies) and a model running it in
place of ours: the side-by-side baseline of ``tsm bench``.

The official op takes its input as it comes: ``x.view(n_batch, n_segment, c, h, w)`` splits
only the outer dimension, so it works on NCHW and on channels-last tensors alike, and
``zeros_like`` keeps the input's memory format; the op never converts. Its ``inplace=True``
branch raises ``NotImplementedError`` (the in-place autograd function is commented out), and so
does this one.
"""

from __future__ import annotations

import torch
from torch import nn

from ..models.shift import TemporalShift
from ..models.trunk import set_memory_format

NCHW = torch.contiguous_format


def naive_shift(
    x: torch.Tensor, t: int, fold_div: int = 8, online: bool = False, inplace: bool = False
) -> torch.Tensor:
    """The official op on ``(N*T, C, H, W)`` viewed as ``(N, T, C, H, W)``, in the input's
    memory format (NCHW or channels-last; no conversion). ``online``: the official online
    demo's layout (``[0:fold]`` from frame t-1). ``inplace``: NotImplementedError, as in the
    official code."""
    if inplace:
        raise NotImplementedError("the official shift has no in-place path (inplace=True raises)")
    nt, c, h, w = x.shape
    v = x.view(nt // t, t, c, h, w)
    fold = c // fold_div
    out = torch.zeros_like(v)
    if online:
        out[:, 1:, :fold] = v[:, :-1, :fold]
        out[:, :, fold:] = v[:, :, fold:]
    else:
        out[:, :-1, :fold] = v[:, 1:, :fold]
        out[:, 1:, fold : 2 * fold] = v[:, :-1, fold : 2 * fold]
        out[:, :, 2 * fold :] = v[:, :, 2 * fold :]
    return out.view(nt, c, h, w)


class OfficialShift(nn.Module):
    """``TemporalShift`` with the official op: the side-by-side baseline of ``tsm bench``."""

    def __init__(self, m: TemporalShift) -> None:
        super().__init__()
        self.net, self.num_segments, self.fold_div = m.net, m.num_segments, m.fold_div

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(naive_shift(x, self.num_segments, self.fold_div))


def official_style(model: nn.Module) -> nn.Module:
    """``model`` with every offline ``TemporalShift`` running the official op, in NCHW (the
    official code's layout; :func:`~tsm_apps.models.trunk.set_memory_format` moves the whole
    model, the op included, to channels-last)."""
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, TemporalShift):
                setattr(parent, name, OfficialShift(child))
    set_memory_format(model.backbone, NCHW)
    return model
