"""The state an online-TSM stream carries from frame to frame, owned by the stream.

A model built with ``shift='online'`` holds no state of its own: its ``TemporalShift`` modules
read and write the buffers of the :class:`ShiftState` bound to them by :func:`stepping` for the
duration of one step. The binding is a context variable, so it belongs to the thread (or task)
that steps: two streams stepping one model from two threads never see each other's buffers, and
a model shared by many streams (every viewer of a server) needs no copy.

Layouts: buffer ``i`` belongs to the model's ``i``-th shift module (registration order) and is
``(N, C_i // fold_div, h_i, w_i)``: channels ``[0:fold]`` of the previous frame of each of the
``N`` streams stepped together. ``None`` before a stream's first frame (read as zeros).
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator, Optional, Sequence

import torch
from torch import Tensor, nn


class ShiftState:
    """The online shift buffers of one stream, or of ``N`` streams stepped as one batch.

    ``static``: the buffers are preallocated and written in place by each step (the form a CUDA
    graph captures: the graph reads and writes the same storage at every replay); otherwise a
    step replaces each buffer with a new tensor.
    """

    def __init__(self, count: int, static: bool = False) -> None:
        if count < 0:
            raise ValueError(f"ShiftState needs a count >= 0, got {count}")
        self.buffers: list[Optional[Tensor]] = [None] * count
        self.static = static

    def __len__(self) -> int:
        return len(self.buffers)

    def reset(self) -> None:
        """Forget the past: static buffers are zeroed in place, others dropped (zeros)."""
        if self.static:
            for b in self.buffers:
                if b is not None:
                    b.zero_()
        else:
            self.buffers = [None] * len(self.buffers)

    @property
    def nbytes(self) -> int:
        """Bytes held by the buffers now (each owns its storage)."""
        return sum(b.untyped_storage().nbytes() for b in self.buffers if b is not None)

    @classmethod
    def gather(cls, states: Sequence["ShiftState"]) -> "ShiftState":
        """One batched state of ``states`` (one row each, in order): buffer ``i`` is the rows'
        buffers concatenated along dim 0; a stream before its first frame gives a zero row;
        ``None`` where no stream has a buffer yet."""
        if not states:
            raise ValueError("ShiftState.gather needs at least one state")
        counts = {len(s) for s in states}
        if len(counts) != 1:
            raise ValueError(f"ShiftState.gather: states of different models ({sorted(counts)})")
        out = cls(counts.pop())
        for i in range(len(out)):
            rows = [s.buffers[i] for s in states]
            like = next((b for b in rows if b is not None), None)
            if like is None:
                continue
            shape = (1,) + tuple(like.shape[1:])
            zero = torch.zeros_like(like[:1])
            rows = [zero if b is None else b for b in rows]
            bad = [tuple(b.shape) for b in rows if b.shape[0] != 1 or b.shape[1:] != like.shape[1:]]
            if bad:
                raise ValueError(
                    f"ShiftState.gather: buffer {i} rows must be {shape}, got {bad[0]} "
                    "(streams of one batch need frames of one size)"
                )
            out.buffers[i] = torch.cat(rows)
        return out

    def split(self, n: int) -> list["ShiftState"]:
        """``n`` one-row states, each owning a copy of its row (the inverse of :meth:`gather`)."""
        out = [ShiftState(len(self)) for _ in range(n)]
        for i, b in enumerate(self.buffers):
            if b is None:
                continue
            if b.shape[0] != n:
                raise ValueError(f"ShiftState.split: buffer {i} has {b.shape[0]} rows, not {n}")
            for r, s in enumerate(out):
                s.buffers[i] = b[r : r + 1].clone()
        return out


class _Binding:
    __slots__ = ("index", "state")

    def __init__(self, modules: Sequence[nn.Module], state: ShiftState) -> None:
        self.index = {id(m): i for i, m in enumerate(modules)}
        self.state = state


_BOUND: ContextVar[Optional[_Binding]] = ContextVar("tsm_shift_state", default=None)


def bound_slot(module: nn.Module) -> Optional[tuple[ShiftState, int]]:
    """``(state, i)`` when a :func:`stepping` block of this thread binds ``module`` as its
    ``i``-th shift module; ``None`` otherwise (the module shifts a clip)."""
    b = _BOUND.get()
    if b is None:
        return None
    i = b.index.get(id(module))
    return None if i is None else (b.state, i)


@contextmanager
def stepping(modules: Sequence[nn.Module], state: ShiftState) -> Iterator[ShiftState]:
    """Inside the block the shift modules ``modules`` (a model's, in registration order) take
    one frame per stream ``(N, C, H, W)`` and read and write ``state``'s buffers; outside it
    they shift clips again. Only this thread (task) sees the binding."""
    if len(state) != len(modules):
        raise ValueError(
            f"a ShiftState of {len(state)} buffers cannot step a model with "
            f"{len(modules)} shift modules"
        )
    token = _BOUND.set(_Binding(modules, state))
    try:
        yield state
    finally:
        _BOUND.reset(token)
