"""The official temporal shift as a test reference, re-typed from its formula (mit-han-lab
``ops/temporal_shift.py`` ``TemporalShift.shift``; online: the online demo's layout).
Independent of the code under test: the shift tests and the kernel tests compare with it."""

import torch


def official_shift(x, t, fold_div=8, online=False):
    """The official shift (mit-han-lab ops/temporal_shift.py): zeros_like + slice copies, NCHW."""
    nt, c, h, w = x.shape
    v = x.contiguous().view(nt // t, t, c, h, w)
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
