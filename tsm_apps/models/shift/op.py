"""The temporal shift: a zero-FLOP, zero-parameter exchange of channels between frames.

Layout everywhere: ``(N*T, C, H, W)`` with the ``T`` frames of one clip contiguous, in either
memory format: contiguous (NCHW) or ``torch.channels_last`` (NHWC in memory). The output has
the input's memory format.

* offline (bi-directional): channels ``[0:fold]`` take frame ``t+1``, channels
  ``[fold:2*fold]`` take frame ``t-1``, the rest stay; zeros at clip boundaries.
* online (uni-directional, causal): channels ``[0:fold]`` take frame ``t-1`` (zeros at the
  first frame of a clip), the rest stay. This is the layout of the official online demo.

Eager execution writes the result with strided slice copies into one ``empty_like`` buffer,
on a copy-free view of the input that keeps channels where memory has them: ``(N, T, C, H*W)``
for NCHW, ``(N, T, H*W, C)`` for channels-last (where ``torch.cat`` along C is slow). Its
backward is the same copy kernel with the directions reversed. The values are exactly those of
the official ``zeros_like`` + slice-copy shift. Under tracing/ONNX export the op is written with
``torch.cat`` of slices and zeros (no slice assignment, which the official code exports wrongly);
under ``torch.compile`` too, so the compiler sees plain tensor ops it can fuse.

Inference (autograd off) needs no shifted copy at all: :func:`shifted_in_place` moves only the
shifted folds inside the input for the duration of the wrapped layer and then puts them back, so
the layer reads exactly the official shifted values and the caller gets its tensor back bit for
bit (:class:`.layer.TemporalShift`, the module that wraps a layer with the shift,
and its streaming step use it on the CPU whenever autograd is off).

On CUDA tensors the shift is one Triton kernel (:mod:`.kernel`) in training and
inference (out of place, one launch: the in-place pair, two launches that move only the
shifted channels, measured slower on a GPU and is kept as an option), and a
streaming step with a static buffer (:func:`online_step_into`, the form a CUDA graph captures)
is one kernel too; the CPU path above is unchanged.

:func:`residual_relu_shift` is a residual block's epilogue and the next block's shift,
``relu(a + b)`` and its shift: on CUDA one kernel writes both (nothing reads ``relu(a + b)``
back), elsewhere the two are computed as written. A ResNet stage takes it under
``cuda_shift_path("fused")`` when :func:`.residual.fuse_residual_shifts` made it a fusing one.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import torch
from torch import Tensor

from .memory_format import is_channels_last
from .slice_copy import OFFLINE, ONLINE, CopyShift, at, frames_view, shift_cat, shift_folds

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
            f"of num_segments={num_segments}"
        )
    fold = x.shape[1] // fold_div if fold_div > 0 else 0
    if fold < 1:
        raise ValueError(
            f"temporal_shift: fold_div={fold_div} leaves no channel to shift for C={x.shape[1]} "
            f"(shape {tuple(x.shape)})"
        )
    return fold


def writable_view(x: Tensor) -> bool:
    """True when ``x`` may be shifted in place: autograd off, no tracing, a dense memory format."""
    return (
        not torch.is_grad_enabled()
        and not _tracing()
        and (x.is_contiguous() or is_channels_last(x))
    )


def _require_writable(x: Tensor, who: str) -> None:
    if not writable_view(x):
        raise ValueError(
            f"{who} needs autograd off and a dense NCHW or channels-last tensor, "
            f"got shape {tuple(x.shape)} strides {x.stride()}"
        )


@contextmanager
def shifted_in_place(
    x: Tensor, num_segments: int, fold_div: int = DEFAULT_FOLD_DIV, online: bool = False
) -> Iterator[Tensor]:
    """Shift ``x`` ``(N*T, C, H, W)`` in place inside the block; restore it exactly on exit.

    Only the shifted folds move: they are saved (a compact copy of ``2*fold`` channels, ``fold``
    online), written shifted into ``x``, and copied back when the block ends, also on error.
    On CUDA two kernel launches do it (:func:`.kernel.shift_in_place` and its undo).
    Inference only (autograd off): a restored tensor would corrupt saved activations.
    """
    fold = _check(x, num_segments, fold_div)
    _require_writable(x, "shifted_in_place")
    dirs = ONLINE if online else OFFLINE
    kernel = kernel_module(x)
    if kernel is not None:
        edge = kernel.shift_in_place(x, num_segments, fold, dirs)
        try:
            yield x
        finally:
            kernel.undo_shift_in_place(x, edge, num_segments, fold, dirs)
        return
    v, cdim = frames_view(x, num_segments)
    moved = v[at(cdim, slice(None), slice(0, len(dirs) * fold))]
    saved = moved.clone()
    shift_folds(v, saved, fold, dirs, cdim)
    try:
        yield x
    finally:
        moved.copy_(saved)


def _tracing() -> bool:
    """Under ``torch.jit.trace``, ONNX export or ``torch.compile`` (where the shift is written
    as plain slices and ``torch.cat``, which a compiler fuses with its neighbours)."""
    return torch.jit.is_tracing() or torch.onnx.is_in_onnx_export() or torch.compiler.is_compiling()


_KERNEL: list = []
CUDA_PATHS = ("kernel", "kernel_copy", "copy", "fused")
_CUDA_PATH: list = []


@contextmanager
def cuda_shift_path(path: str) -> Iterator[None]:
    """Inside the block CUDA tensors take ``path`` (to compare them): ``"kernel"`` (Triton
    kernels, the in-place pair at inference), ``"kernel_copy"`` (the out-of-place kernel, as
    outside any block), ``"copy"`` (no kernel: the slice copies of the CPU path) or
    ``"fused"`` (the out-of-place kernel, and a ResNet stage made by
    :func:`.residual.fuse_residual_shifts` writes each shifted block's input in the previous
    block's epilogue: :func:`residual_relu_shift`)."""
    if path not in CUDA_PATHS:
        raise ValueError(f"cuda_shift_path must be one of {CUDA_PATHS}, got {path!r}")
    _CUDA_PATH.append(path)
    try:
        yield
    finally:
        _CUDA_PATH.pop()


def shifts_in_place(x: Tensor) -> bool:
    """Whether inference shifts ``x`` in place (:func:`writable_view`). On CUDA the
    one-launch out-of-place kernel is the default: eagerly, inference at small batches waits
    on launches and the in-place pair launches twice; replayed from a CUDA graph the pair's
    second kernel costs more than the bytes it saves at batch 1, and they are level at batch 16
    (docs/results.md §6.5). ``cuda_shift_path("kernel")`` takes the in-place pair."""
    if not writable_view(x):
        return False
    return not x.is_cuda or _CUDA_PATH[-1:] == ["kernel"]


def kernel_module(x: Tensor):
    """The Triton shift module (:mod:`.kernel`) for a CUDA tensor outside tracing, where
    Triton is installed; ``None`` otherwise (the CPU path never imports it)."""
    if not x.is_cuda or _tracing() or _CUDA_PATH[-1:] == ["copy"]:
        return None
    if not _KERNEL:
        try:
            from . import kernel as shift_kernel
        except ImportError:  # a CUDA build of torch without Triton
            shift_kernel = None
        _KERNEL.append(shift_kernel)
    return _KERNEL[0]


def temporal_shift(
    x: Tensor, num_segments: int, fold_div: int = DEFAULT_FOLD_DIV, online: bool = False
) -> Tensor:
    """Shift channels along time.

    Args:
        x: ``(N*T, C, H, W)``, frames of one clip contiguous; NCHW or channels-last.
        num_segments: ``T``.
        fold_div: ``fold = C // fold_div`` channels move per direction.
        online: causal shift (past frames only) instead of bi-directional.

    Returns:
        A new tensor of the same shape and memory format; ``x`` is never modified.
    """
    fold = _check(x, num_segments, fold_div)
    if _tracing():
        return shift_cat(x, num_segments, fold, online)
    kernel = kernel_module(x)
    if kernel is not None:
        return kernel.shift(x, num_segments, fold, ONLINE if online else OFFLINE)
    return CopyShift.apply(x, num_segments, fold, ONLINE if online else OFFLINE)


def _check_buffer(x: Tensor, buffer: Tensor | None, fold_div: int) -> int:
    fold = _check(x, 1, fold_div)
    if buffer is not None and buffer.shape != (x.shape[0], fold, x.shape[2], x.shape[3]):
        raise ValueError(
            f"shift buffer shape {tuple(buffer.shape)} does not match frame "
            f"{tuple(x.shape)} with fold {fold}"
        )
    return fold


@contextmanager
def online_step_in_place(
    x: Tensor, buffer: Tensor | None, fold_div: int = DEFAULT_FOLD_DIV
) -> Iterator[Tensor]:
    """:func:`online_shift_step` without the shifted copy (autograd off): inside the block ``x``
    ``(N, C, H, W)`` holds the shifted frame; yields the new buffer ``(N, fold, H, W)`` (a
    compact copy of the fold channels); ``x`` is restored exactly on exit, also on error."""
    fold = _check_buffer(x, buffer, fold_div)
    _require_writable(x, "online_step_in_place")
    folds = x[:, :fold]
    new = folds.clone()  # compact, in the layout of x
    if buffer is None:
        folds.zero_()
    else:
        folds.copy_(buffer)
    try:
        yield new
    finally:
        folds.copy_(new)


def online_shift_step(
    x: Tensor, buffer: Tensor | None, fold_div: int = DEFAULT_FOLD_DIV
) -> tuple[Tensor, Tensor]:
    """One streaming step of the online shift.

    Args:
        x: ``(N, C, H, W)``, the current frame of ``N`` independent streams (any memory format).
        buffer: ``(N, C // fold_div, H, W)`` channels ``[0:fold]`` of the previous frame, or
            ``None`` at the first frame (zeros).

    Returns:
        ``(shifted (N, C, H, W), new_buffer (N, fold, H, W))``; the shifted frame has the memory
        format of ``x``; the new buffer is a compact copy that owns its storage (it does not keep
        ``x`` alive).
    """
    fold = _check_buffer(x, buffer, fold_div)
    new = x[:, :fold].clone()  # compact, in the layout of x
    if _tracing():
        if buffer is None:
            buffer = x.new_zeros(x.shape[0], fold, x.shape[2], x.shape[3])
        return torch.cat([buffer, x[:, fold:]], dim=1), new
    out = torch.empty_like(x)
    if buffer is None:
        out[:, :fold] = 0
    else:
        out[:, :fold] = buffer
    out[:, fold:] = x[:, fold:]
    return out, new


def online_step_into(x: Tensor, buffer: Tensor, fold_div: int = DEFAULT_FOLD_DIV) -> Tensor:
    """One streaming step with a static buffer (autograd off): returns the shifted frame and
    overwrites ``buffer`` in place with the frame's channels ``[0:fold]``.

    Args:
        x: ``(N, C, H, W)``, the current frame of ``N`` streams, NCHW or channels-last.
        buffer: ``(N, C // fold_div, H, W)``, dense in the memory format of ``x``: channels
            ``[0:fold]`` of the previous frame (zeros before the first frame).

    Returns:
        The shifted frame ``(N, C, H, W)``, a new tensor in the memory format of ``x``. The
        buffer keeps its storage, so a CUDA graph that captures the step reads and writes it.
    """
    if buffer is None:
        raise ValueError(f"online_step_into needs a buffer for frame {tuple(x.shape)}")
    fold = _check_buffer(x, buffer, fold_div)
    if torch.is_grad_enabled():
        raise ValueError(
            f"online_step_into writes its buffer in place: call it with autograd "
            f"off (frame {tuple(x.shape)})"
        )
    kernel = kernel_module(x)
    if kernel is not None:
        return kernel.online_step(x, buffer, fold)
    out = torch.empty_like(x)
    out[:, :fold] = buffer
    out[:, fold:] = x[:, fold:]
    buffer.copy_(x[:, :fold])
    return out


def fuses_epilogues(x: Tensor) -> bool:
    """Whether :func:`cuda_shift_path` ``("fused")`` is on for ``x`` (a CUDA tensor outside
    tracing, Triton installed): a fusing stage then calls :func:`residual_relu_shift`."""
    return _CUDA_PATH[-1:] == ["fused"] and kernel_module(x) is not None


def residual_relu_shift(
    a: Tensor,
    b: Tensor,
    num_segments: int,
    fold_div: int = DEFAULT_FOLD_DIV,
    online: bool = False,
) -> tuple[Tensor, Tensor]:
    """A residual block's epilogue and the next block's shift: ``y = relu(a + b)`` and
    ``z = temporal_shift(y)``.

    Args:
        a: the residual branch ``(N*T, C, H, W)``, frames of one clip contiguous; NCHW or
            channels-last.
        b: the identity, the same shape (and, for the kernel, dtype) as ``a``.
        num_segments, fold_div, online: as in :func:`temporal_shift`.

    Returns:
        ``(y, z)``, both ``(N*T, C, H, W)``. On CUDA one Triton launch writes both
        (:func:`.kernel.residual_shift`; its backward is one launch too), computing each
        element of ``z`` from ``a`` and ``b`` (nothing reads ``y`` back); the values equal
        ``torch.relu(a + b)`` and its official shift bit for bit, and so do the gradients.
        Elsewhere (and for ``a``, ``b`` of different dtypes) the two are computed as written.
    """
    fold = _check(a, num_segments, fold_div)
    if not isinstance(b, Tensor) or b.shape != a.shape:
        raise ValueError(
            f"residual_relu_shift: identity of shape "
            f"{tuple(b.shape) if isinstance(b, Tensor) else type(b).__name__} does not match "
            f"the branch {tuple(a.shape)}"
        )
    kernel = kernel_module(a)
    if kernel is not None and a.dtype == b.dtype and a.device == b.device:
        return kernel.residual_shift(a, b, num_segments, fold, ONLINE if online else OFFLINE)
    y = torch.relu(a + b)
    return y, temporal_shift(y, num_segments, fold_div, online)
