"""The temporal shift as one Triton kernel per shift (the CUDA path of :mod:`.op`).

Layout: ``(N*T, C, H, W)`` with the ``T`` frames of a clip contiguous, dense in memory as NCHW
or channels-last (anything else is made contiguous first); outputs keep the input's format.
In both formats one frame is a contiguous run of ``C*H*W`` elements, so "the same element one
frame later" is ``frame_numel`` elements further; the kernel only has to know each element's
channel (``r // (H*W)`` in NCHW, ``r % C`` in channels-last) to pick its source frame.

* :func:`shift` reads every element once and writes every element once (one launch), with
  zeros where the source frame lies outside the clip; its backward is the same kernel with the
  directions reversed. Values equal the official ``zeros_like`` + slice-copy shift bit for bit
  (it only moves elements).
* :func:`shift_in_place` (inference) moves only the shifted channels, in place, one launch;
  :func:`undo_shift_in_place` puts them back (zeros at the clip edges are undone from the
  dropped elements it saved), one launch. Half the bytes of the out-of-place shift, but one
  launch more: on an H200 it measured slower than :func:`shift` eagerly and at batch 1 from a
  CUDA graph, level at batch 16 (docs/results.md §6.5), so inference uses :func:`shift` unless
  ``cuda_shift_path("kernel")`` asks for the pair.
* :func:`online_step` is one streaming step with a static buffer ``(N, fold, H, W)``: it writes
  the shifted frame (the buffer in channels ``[0:fold]``, the frame elsewhere) and overwrites
  the buffer in place with the frame's channels ``[0:fold]``, in one launch. Every element of
  the buffer is read and then written by the same program, so in-place is race-free; the
  buffer's address never changes, so a CUDA graph can capture the step.
* :func:`residual_shift` is a residual block's epilogue and the next block's shift in one
  launch: from the branch ``a`` and the identity ``b`` it writes ``y = relu(a + b)`` and
  ``z = shift(y)``, each program computing ``a + b`` at its own element (for ``y``) and at the
  source element (for ``z``), so ``y`` is never read back. Its backward is one launch:
  ``(grad_y + unshift(grad_z))`` where ``y > 0``, for ``a`` and ``b``. Sums are done in fp32
  and rounded once (bf16 on the bits), as PyTorch adds fp16/bf16 tensors: the values and
  gradients equal ``torch.relu(a + b)`` and the official shift bit for bit. Not yet timed on
  a GPU.

Tests run the kernels on the CPU under Triton's interpreter (``TRITON_INTERPRET=1`` set before
this module is imported).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from torch import Tensor

from .memory_format import is_channels_last

BLOCK = 1024
_MAX_BLOCKS = 65535  # CUDA's limit on grid dimension 1


@triton.jit
def _shift_kernel(
    src,
    dst,
    frame_numel,
    hw,
    channels,
    fold,
    num_segments,
    d0,
    d1,
    CHANNELS_LAST: tl.constexpr,
    BLOCK: tl.constexpr,
):
    """Program ``(f, b)``: elements ``[b*BLOCK, (b+1)*BLOCK)`` of frame ``f`` of ``dst``.
    Channels ``[0:fold]`` come from frame ``t + d0``, ``[fold:2*fold]`` from ``t + d1``, the
    rest from ``t`` (``t = f % num_segments``); zeros where that frame is outside the clip."""
    f = tl.program_id(0)
    r = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    inside = r < frame_numel
    if CHANNELS_LAST:
        ch = r % channels
    else:
        ch = r // hw
    d = tl.where(ch < fold, d0, tl.where(ch < 2 * fold, d1, 0))
    t = f % num_segments + d
    ok = inside & (t >= 0) & (t < num_segments)
    base = f.to(tl.int64) * frame_numel
    v = tl.load(src + base + d * frame_numel + r, mask=ok, other=0)
    tl.store(dst + base + r, v, mask=inside)


@triton.jit
def _online_step_kernel(
    x, out, buf, frame_numel, hw, channels, fold, CHANNELS_LAST: tl.constexpr, BLOCK: tl.constexpr
):
    """Program ``(n, b)``: elements ``[b*BLOCK, (b+1)*BLOCK)`` of stream ``n``'s frame.
    ``out`` takes ``buf`` in channels ``[0:fold]`` and ``x`` elsewhere; ``buf`` takes ``x``'s
    channels ``[0:fold]`` (``buf`` is dense in ``x``'s memory format, ``fold`` channels)."""
    n = tl.program_id(0)
    r = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    inside = r < frame_numel
    if CHANNELS_LAST:
        ch = r % channels
        at = (r // channels) * fold + ch
    else:
        ch = r // hw
        at = r
    folded = inside & (ch < fold)
    base = n.to(tl.int64) * frame_numel
    bbase = n.to(tl.int64) * fold * hw
    v = tl.load(x + base + r, mask=inside)
    old = tl.load(buf + bbase + at, mask=folded)
    tl.store(buf + bbase + at, v, mask=folded)
    tl.store(out + base + r, tl.where(ch < fold, old, v), mask=inside)


@triton.jit
def _column_kernel(
    x,
    edge,
    columns,
    channels,
    fold,
    frame_numel,
    d0,
    d1,
    UNDO: tl.constexpr,
    CHANNELS_LAST: tl.constexpr,
    T: tl.constexpr,
    T_PAD: tl.constexpr,
    BLOCK: tl.constexpr,
):
    """Program ``(n, b, k)``: columns ``[b*BLOCK, (b+1)*BLOCK)`` of lane ``k`` of clip ``n``, in
    place, as one ``(T_PAD, BLOCK)`` tile. Lane ``k`` is channels ``[k*fold, (k+1)*fold)``, all
    moving by ``e`` (``d0`` for lane 0, ``d1`` for lane 1): ``x[t] <- x[t+e]``; a column is one
    element of the lane over the clip's ``T`` frames (``columns = fold*H*W`` per lane). Outside
    the clip the fill is zero, and the element that drops out (``x[0]`` for ``e > 0``,
    ``x[T-1]`` otherwise) is saved in ``edge``; with ``UNDO`` the fill is read from ``edge``
    instead. Every load of the tile is issued before the barrier and every store after it
    (a row's stores overwrite what another thread of the program loaded), so all ``T`` frames
    are in flight at once; one direction per program keeps the loads contiguous."""
    n = tl.program_id(0)
    k = tl.program_id(2)
    j = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    live = j < columns
    if CHANNELS_LAST:
        off = (j // fold) * channels + k * fold + j % fold
    else:
        off = k * columns + j
    e = tl.where(k == 0, d0, d1)
    t = tl.arange(0, T_PAD)[:, None]
    rows = (t < T) & live[None, :]
    inside = rows & (t + e >= 0) & (t + e < T)
    base = x + n.to(tl.int64) * T * frame_numel
    at_edge = edge + (n.to(tl.int64) * 2 + k) * columns + j
    val = tl.load(base + (t + e) * frame_numel + off[None, :], mask=inside, other=0)
    if UNDO:
        fill = tl.load(at_edge, mask=live, other=0)
        val = tl.where(inside, val, fill[None, :])
    else:
        dropped = tl.load(base + tl.where(e > 0, 0, T - 1) * frame_numel + off, mask=live)
    tl.debug_barrier()
    if not UNDO:
        tl.store(at_edge, dropped, mask=live)
    tl.store(base + t * frame_numel + off[None, :], val, mask=rows)


def _dense(x: Tensor) -> tuple:
    """``(x dense as NCHW or channels-last, is_channels_last)``."""
    if is_channels_last(x):
        return x, True
    return x.contiguous(), False


def _grid(rows: int, frame_numel: int, shape: tuple) -> tuple:
    blocks = triton.cdiv(frame_numel, BLOCK)
    if blocks > _MAX_BLOCKS or frame_numel >= 2**31:
        raise ValueError(
            f"shift kernel: frames of {frame_numel} elements (shape {shape}) are "
            f"too large (at most {_MAX_BLOCKS * BLOCK})"
        )
    return (rows, blocks)


def shift_into(out: Tensor, x: Tensor, num_segments: int, fold: int, dirs: tuple) -> Tensor:
    """Write ``x`` ``(N*T, C, H, W)`` shifted into ``out`` (same shape, dense, same memory
    format as ``x``): fold ``k`` takes frame ``t + dirs[k]`` (``dirs`` of length 1 or 2)."""
    x, cl = _dense(x)
    nt, c, h, w = x.shape
    d0, d1 = (tuple(dirs) + (0,))[:2]
    grid = _grid(nt, c * h * w, tuple(x.shape))
    _shift_kernel[grid](
        x, out, c * h * w, h * w, c, fold, num_segments, d0, d1, CHANNELS_LAST=cl, BLOCK=BLOCK
    )
    return out


def _shift(x: Tensor, num_segments: int, fold: int, dirs: tuple) -> Tensor:
    x, cl = _dense(x)
    out = torch.empty_like(x, memory_format=torch.channels_last if cl else torch.contiguous_format)
    return shift_into(out, x, num_segments, fold, dirs)


class Shift(torch.autograd.Function):
    """Kernel shift; the backward is the opposite shift of the gradient (also one launch)."""

    @staticmethod
    def forward(ctx, x: Tensor, num_segments: int, fold: int, dirs: tuple) -> Tensor:
        ctx.t, ctx.fold, ctx.dirs = num_segments, fold, dirs
        return _shift(x, num_segments, fold, dirs)

    @staticmethod
    def backward(ctx, g: Tensor) -> tuple:
        back = tuple(-d for d in ctx.dirs)
        return _shift(g, ctx.t, ctx.fold, back), None, None, None


def shift(x: Tensor, num_segments: int, fold: int, dirs: tuple) -> Tensor:
    """``x`` ``(N*T, C, H, W)`` shifted (a new tensor in ``x``'s memory format); differentiable.
    ``dirs``: per fold, ``+1`` takes the next frame, ``-1`` the previous one."""
    if not (x.requires_grad and torch.is_grad_enabled()):  # no graph to record: skip autograd
        return _shift(x, num_segments, fold, tuple(dirs))
    return Shift.apply(x, num_segments, fold, tuple(dirs))


def _columns(
    x: Tensor, edge: Tensor | None, num_segments: int, fold: int, dirs: tuple, undo: bool
) -> Tensor:
    if not (x.is_contiguous() or is_channels_last(x)):
        raise ValueError(
            f"in-place shift kernel needs a dense NCHW or channels-last tensor, got "
            f"shape {tuple(x.shape)} strides {x.stride()}"
        )
    nt, c, h, w = x.shape
    lanes, columns = len(dirs), fold * h * w
    if edge is None:  # (N, 2, fold*H*W): lane 1 unused online
        edge = torch.empty(nt // num_segments, 2, columns, dtype=x.dtype, device=x.device)
    if num_segments * c * h * w >= 2**31:
        raise ValueError(
            f"in-place shift kernel: clips of shape {tuple(x.shape)} / "
            f"{num_segments} frames are too large"
        )
    e = tuple(-d for d in dirs) if undo else tuple(dirs)
    t_pad = max(2, triton.next_power_of_2(num_segments))
    block = max(32, BLOCK // t_pad)  # a tile of about BLOCK elements: T frames of columns
    grid = (nt // num_segments, triton.cdiv(columns, block), lanes)
    if grid[1] > _MAX_BLOCKS:
        raise ValueError(f"in-place shift kernel: frames of shape {tuple(x.shape)} are too large")
    _column_kernel[grid](
        x,
        edge,
        columns,
        c,
        fold,
        c * h * w,
        e[0],
        e[-1],
        UNDO=undo,
        CHANNELS_LAST=is_channels_last(x),
        T=num_segments,
        T_PAD=t_pad,
        BLOCK=block,
    )
    return edge


def shift_in_place(x: Tensor, num_segments: int, fold: int, dirs: tuple) -> Tensor:
    """Shift ``x`` ``(N*T, C, H, W)`` (dense NCHW or channels-last) in place, inference only:
    only the ``len(dirs) * fold`` moved channels are read and written, once. Returns the edge
    ``(N, 2, fold * H * W)``: the elements that dropped out of the clips, per direction, for
    :func:`undo_shift_in_place`."""
    return _columns(x, None, num_segments, fold, tuple(dirs), undo=False)


def undo_shift_in_place(x: Tensor, edge: Tensor, num_segments: int, fold: int, dirs: tuple) -> None:
    """Put ``x`` back exactly as it was before :func:`shift_in_place` returned ``edge``."""
    _columns(x, edge, num_segments, fold, tuple(dirs), undo=True)


def online_step(x: Tensor, buffer: Tensor, fold: int) -> Tensor:
    """One streaming step: returns ``x`` ``(N, C, H, W)`` with channels ``[0:fold]`` taken from
    ``buffer`` ``(N, fold, H, W)``, and overwrites ``buffer`` in place with ``x[:, :fold]``.
    ``buffer`` must be dense in ``x``'s memory format (NCHW or channels-last)."""
    x, cl = _dense(x)
    fmt = torch.channels_last if cl else torch.contiguous_format
    if not buffer.is_contiguous(memory_format=fmt) or buffer.dtype != x.dtype:
        raise ValueError(
            f"online_step: buffer {tuple(buffer.shape)} {buffer.dtype} strides "
            f"{buffer.stride()} is not dense {x.dtype} in the memory format of the "
            f"frame {tuple(x.shape)} (channels_last={cl})"
        )
    n, c, h, w = x.shape
    out = torch.empty_like(x, memory_format=fmt)
    grid = _grid(n, c * h * w, tuple(x.shape))
    _online_step_kernel[grid](
        x, out, buffer, c * h * w, h * w, c, fold, CHANNELS_LAST=cl, BLOCK=BLOCK
    )
    return out


@triton.jit
def _rounded(s, OUT: tl.constexpr, BF16: tl.constexpr):
    """fp32 ``s`` rounded to nearest-even in ``OUT``, as PyTorch rounds a sum of fp16/bf16
    tensors. bf16 is rounded on the bits (c10's ``round_to_nearest_even``: NaN stays NaN), which
    a GPU's conversion equals and Triton's interpreter, which truncates, does not."""
    if BF16:
        bits = s.to(tl.uint32, bitcast=True)
        up = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
        up = tl.where(s != s, 0x7FC0, up)
        return up.to(tl.uint16).to(tl.bfloat16, bitcast=True)
    else:
        return s.to(OUT)


@triton.jit
def _residual_shift_kernel(
    a,
    b,
    y,
    z,
    frame_numel,
    hw,
    channels,
    fold,
    num_segments,
    d0,
    d1,
    BF16: tl.constexpr,
    CHANNELS_LAST: tl.constexpr,
    BLOCK: tl.constexpr,
):
    """Program ``(f, b)``: elements ``[b*BLOCK, (b+1)*BLOCK)`` of frame ``f`` of ``y`` and ``z``.
    ``y = relu(a + b)`` at the element; ``z`` is ``relu(a + b)`` computed again at the element
    of frame ``t + d`` (``d`` as in :func:`_shift_kernel`; zero outside the clip), so nothing
    reads ``y`` back. The add is done in fp32 and rounded once to the tensors' dtype, as
    PyTorch adds fp16/bf16 tensors; relu keeps ``-0.0`` and NaN, as ``torch.relu``."""
    f = tl.program_id(0)
    r = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    inside = r < frame_numel
    if CHANNELS_LAST:
        ch = r % channels
    else:
        ch = r // hw
    d = tl.where(ch < fold, d0, tl.where(ch < 2 * fold, d1, 0))
    t = f % num_segments + d
    moved = inside & (d != 0) & (t >= 0) & (t < num_segments)
    base = f.to(tl.int64) * frame_numel
    here = _rounded(
        tl.load(a + base + r, mask=inside, other=0).to(tl.float32)
        + tl.load(b + base + r, mask=inside, other=0).to(tl.float32),
        y.dtype.element_ty,
        BF16,
    )
    here = tl.where(here < 0, 0, here)
    src = base + d * frame_numel + r
    there = _rounded(
        tl.load(a + src, mask=moved, other=0).to(tl.float32)
        + tl.load(b + src, mask=moved, other=0).to(tl.float32),
        y.dtype.element_ty,
        BF16,
    )
    there = tl.where(there < 0, 0, there)
    tl.store(y + base + r, here, mask=inside)
    tl.store(z + base + r, tl.where(d == 0, here, tl.where(moved, there, 0)), mask=inside)


@triton.jit
def _residual_shift_backward_kernel(
    gy,
    gz,
    y,
    g,
    frame_numel,
    hw,
    channels,
    fold,
    num_segments,
    d0,
    d1,
    HAS_GY: tl.constexpr,
    HAS_GZ: tl.constexpr,
    BF16: tl.constexpr,
    CHANNELS_LAST: tl.constexpr,
    BLOCK: tl.constexpr,
):
    """Program ``(f, b)``: ``g = (gy + unshift(gz))`` where ``y > 0`` (else 0), ``unshift``
    being the shift with directions ``(d0, d1)`` already reversed by the caller. The sum is
    done in fp32 and rounded once, as autograd sums two gradients of one tensor."""
    f = tl.program_id(0)
    r = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    inside = r < frame_numel
    if CHANNELS_LAST:
        ch = r % channels
    else:
        ch = r // hw
    d = tl.where(ch < fold, d0, tl.where(ch < 2 * fold, d1, 0))
    t = f % num_segments + d
    ok = inside & (t >= 0) & (t < num_segments)
    base = f.to(tl.int64) * frame_numel
    out = tl.load(y + base + r, mask=inside, other=0)
    if HAS_GZ:
        total = tl.load(gz + base + d * frame_numel + r, mask=ok, other=0).to(tl.float32)
        if HAS_GY:
            total += tl.load(gy + base + r, mask=inside, other=0).to(tl.float32)
    else:
        total = tl.load(gy + base + r, mask=inside, other=0).to(tl.float32)
    grad = _rounded(total, g.dtype.element_ty, BF16)
    tl.store(g + base + r, tl.where(out <= 0, 0, grad), mask=inside)


def _check_pair(a: Tensor, b: Tensor) -> None:
    if a.dim() != 4 or a.shape != b.shape or a.dtype != b.dtype or a.device != b.device:
        raise ValueError(
            f"residual shift kernel: a {tuple(a.shape)} {a.dtype} and b {tuple(b.shape)} "
            f"{b.dtype} must be (N*T, C, H, W) of one shape, dtype and device"
        )


def _format(x: Tensor) -> torch.memory_format:
    return torch.channels_last if is_channels_last(x) else torch.contiguous_format


def _residual_shift(a: Tensor, b: Tensor, num_segments: int, fold: int, dirs: tuple) -> tuple:
    a, cl = _dense(a)
    fmt = _format(a)
    b = b.contiguous(memory_format=fmt)
    nt, c, h, w = a.shape
    y, z = torch.empty_like(a, memory_format=fmt), torch.empty_like(a, memory_format=fmt)
    d0, d1 = (tuple(dirs) + (0,))[:2]
    grid = _grid(nt, c * h * w, tuple(a.shape))
    _residual_shift_kernel[grid](
        a,
        b,
        y,
        z,
        c * h * w,
        h * w,
        c,
        fold,
        num_segments,
        d0,
        d1,
        BF16=a.dtype == torch.bfloat16,
        CHANNELS_LAST=cl,
        BLOCK=BLOCK,
    )
    return y, z


def _residual_shift_backward(
    gy: Tensor | None, gz: Tensor | None, y: Tensor, num_segments: int, fold: int, dirs: tuple
) -> Tensor:
    fmt = _format(y)
    gy = gy if gy is None else gy.contiguous(memory_format=fmt)
    gz = gz if gz is None else gz.contiguous(memory_format=fmt)
    nt, c, h, w = y.shape
    g = torch.empty_like(y, memory_format=fmt)
    d0, d1 = (tuple(-d for d in dirs) + (0,))[:2]
    grid = _grid(nt, c * h * w, tuple(y.shape))
    _residual_shift_backward_kernel[grid](
        y if gy is None else gy,
        y if gz is None else gz,
        y,
        g,
        c * h * w,
        h * w,
        c,
        fold,
        num_segments,
        d0,
        d1,
        HAS_GY=gy is not None,
        HAS_GZ=gz is not None,
        BF16=y.dtype == torch.bfloat16,
        CHANNELS_LAST=fmt == torch.channels_last,
        BLOCK=BLOCK,
    )
    return g


class ResidualShift(torch.autograd.Function):
    """``(relu(a + b), shift(relu(a + b)))`` in one launch; the backward is one launch too:
    ``g = grad_y + unshift(grad_z)`` where the output is positive, for ``a`` and for ``b``."""

    @staticmethod
    def forward(ctx, a: Tensor, b: Tensor, num_segments: int, fold: int, dirs: tuple) -> tuple:
        ctx.set_materialize_grads(False)
        ctx.t, ctx.fold, ctx.dirs = num_segments, fold, dirs
        y, z = _residual_shift(a, b, num_segments, fold, dirs)
        ctx.save_for_backward(y)
        return y, z

    @staticmethod
    def backward(ctx, gy: Tensor | None, gz: Tensor | None) -> tuple:
        (y,) = ctx.saved_tensors
        if gy is None and gz is None:
            return None, None, None, None, None
        g = _residual_shift_backward(gy, gz, y, ctx.t, ctx.fold, ctx.dirs)
        return g, g, None, None, None


def residual_shift(a: Tensor, b: Tensor, num_segments: int, fold: int, dirs: tuple) -> tuple:
    """The residual epilogue and the next block's shift in one launch: ``a`` (the branch) and
    ``b`` (the identity), both ``(N*T, C, H, W)`` of one dtype, give ``(y, z)`` with
    ``y = relu(a + b)`` and ``z = shift(y)`` (fold ``k`` takes frame ``t + dirs[k]``), both in
    ``a``'s memory format (NCHW or channels-last). Differentiable in ``a`` and ``b``."""
    _check_pair(a, b)
    if not (torch.is_grad_enabled() and (a.requires_grad or b.requires_grad)):
        return _residual_shift(a, b, num_segments, fold, tuple(dirs))
    return ResidualShift.apply(a, b, num_segments, fold, tuple(dirs))
