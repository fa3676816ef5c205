"""Launch-free inference at fixed shapes: a call captured once into a CUDA graph and replayed.

A captured call reads its inputs from static tensors and writes its outputs into static
tensors; state that lives across calls (the online shift buffers) must be tensors the graph
reads and writes in place, never tensors rebound by Python. Every input of a replay is copied
into the static inputs first, so callers pass ordinary tensors of the captured shape.
"""

from __future__ import annotations

import weakref
from typing import Callable, Sequence

import torch
from torch import Tensor, nn


def _signature(xs: Sequence[Tensor]) -> tuple:
    return tuple((tuple(x.shape), x.dtype, x.device) for x in xs)


class CapturedCall:
    """``fn(*inputs)`` captured into one ``torch.cuda.CUDAGraph`` (CUDA tensors, autograd off).

    ``fn`` runs ``warmup`` times on a side stream first (as CUDA graphs require); ``settle``,
    when given, runs after the warm-up and the capture (to undo the warm-up's effect on state,
    e.g. zero the shift buffers). Calling it copies the inputs into the static inputs, replays
    the graph and returns the static outputs: read or clone them before the next call.
    """

    def __init__(
        self,
        fn: Callable,
        inputs: Sequence[Tensor],
        warmup: int = 2,
        settle: Callable[[], None] | None = None,
    ) -> None:
        if not all(isinstance(x, Tensor) and x.is_cuda for x in inputs):
            raise ValueError(f"CapturedCall needs CUDA tensors, got {_signature(inputs)}")
        self.inputs = [x.clone() for x in inputs]
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.no_grad(), torch.cuda.stream(side):
            for _ in range(warmup):
                fn(*self.inputs)
        torch.cuda.current_stream().wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.no_grad(), torch.cuda.graph(self.graph):
            self.outputs = fn(*self.inputs)
        if settle is not None:
            settle()

    @property
    def signature(self) -> tuple:
        return _signature(self.inputs)

    def __call__(self, *xs: Tensor):
        if _signature(xs) != self.signature:
            raise ValueError(f"captured call expects inputs {self.signature}, got {_signature(xs)}")
        for s, x in zip(self.inputs, xs):
            s.copy_(x)
        self.graph.replay()
        return self.outputs


class GraphedForward:
    """``module``'s inference forward replayed from a CUDA graph per input shape.

    Calling it captures on the first call with a new input shape/dtype (and a new
    ``num_segments``, train/eval mode or parameter storage of ``module``; at most ``max_shapes``
    captures are kept) and replays after; a clone of the output is returned. Inputs off CUDA,
    or calls with autograd on, run ``module`` eagerly. Suits a fixed test protocol: views
    ``(V, T, 3, H, W)`` of one size, where every batch but a video's last has one shape. Holds
    ``module`` weakly (see :func:`graphed`).
    """

    def __init__(self, module: nn.Module, max_shapes: int = 4) -> None:
        self._module = weakref.ref(module)
        self.max_shapes = max_shapes
        self._calls: dict = {}

    @property
    def module(self) -> nn.Module:
        m = self._module()
        if m is None:
            raise RuntimeError("the graphed module no longer exists")
        return m

    def _key(self, x: Tensor) -> tuple:
        m = self.module
        first = next(m.parameters(), None)
        return (
            _signature([x]),
            getattr(m, "num_segments", None),
            m.training,
            None if first is None else first.data_ptr(),
        )

    def __call__(self, x: Tensor) -> Tensor:
        m = self.module
        if not x.is_cuda or torch.is_grad_enabled():
            return m(x)
        key = self._key(x)
        call = self._calls.get(key)
        if call is None:
            if len(self._calls) >= self.max_shapes:
                return m(x)
            call = self._calls[key] = CapturedCall(m, [x])
        return call(x).clone()


_GRAPHED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def graphed(module: nn.Module) -> Callable[[Tensor], Tensor]:
    """``module``'s :class:`GraphedForward` (one per module, kept while the module lives) when
    its parameters are on CUDA; ``module`` itself otherwise."""
    first = next(module.parameters(), None)
    if first is None or not first.is_cuda:
        return module
    g = _GRAPHED.get(module)
    if g is None:
        g = _GRAPHED[module] = GraphedForward(module)
    return g
