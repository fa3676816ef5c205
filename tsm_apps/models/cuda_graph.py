"""Launch-free inference at fixed shapes: a call captured once into a CUDA graph and replayed.

A captured call reads its inputs from static tensors and writes its outputs into static
tensors; state that lives across calls (the online shift buffers) must be tensors the graph
reads and writes in place, never tensors rebound by Python. Every input of a replay is copied
into the static inputs first, so callers pass ordinary tensors of the captured shape.

Capture is made safe in one place, :class:`CapturedCall`:

* on the inputs' device (``torch.cuda.device(x.device)``): a capture on another device records
  work that never touches the inputs, and every replay returns the first call's outputs;
* one capture at a time in the process (``torch.cuda.graph`` sets a process-wide capture mode):
  a lock;
* under autocast, with autocast's cast cache off: a cached half-precision copy of a weight is
  freed when the caller's autocast block ends, and a graph that read it would replay freed
  memory; the casts are captured instead. The autocast state is part of every graph key
  (:func:`autocast_state`): a graph captured under one state is never replayed under another.

The CUDA calls go through a backend object (:data:`CUDA`), so a test can stand a recording
double in for ``torch.cuda`` and check these rules on a machine without a GPU.
"""

from __future__ import annotations

import threading
import weakref
from contextlib import nullcontext
from typing import Callable, Sequence

import torch
from torch import Tensor, nn

_CAPTURE_LOCK = threading.Lock()


def _signature(xs: Sequence[Tensor]) -> tuple:
    return tuple((tuple(x.shape), x.dtype, x.device) for x in xs)


def autocast_state(device_type: str) -> tuple:
    """``(enabled, dtype)`` of autocast for ``device_type`` in this thread now."""
    enabled = torch.is_autocast_enabled(device_type)
    return (enabled, torch.get_autocast_dtype(device_type) if enabled else None)


class CudaBackend:
    """What a capture needs of ``torch.cuda``: the device guard, side streams, the graph."""

    def on_device(self, x: Tensor) -> bool:
        return x.is_cuda

    def device(self, device: torch.device):
        return torch.cuda.device(device)

    def capture(self, fn: Callable, inputs: Sequence[Tensor], warmup: int):
        """``(graph, outputs)``: ``fn(*inputs)`` run ``warmup`` times on a side stream, then
        captured."""
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(warmup):
                fn(*inputs)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            outputs = fn(*inputs)
        return graph, outputs

    def replay(self, graph) -> None:
        graph.replay()


CUDA = CudaBackend()


def _capture_autocast(device_type: str, state: tuple):
    """Autocast as ``state`` with the cast cache off (a no-op context when autocast is off)."""
    enabled, dtype = state
    if not enabled:
        return nullcontext()
    return torch.autocast(device_type, dtype=dtype, cache_enabled=False)


class CapturedCall:
    """``fn(*inputs)`` captured into one CUDA graph (autograd off), safely (module docstring).

    ``fn`` runs ``warmup`` times on a side stream first (as CUDA graphs require); ``settle``,
    when given, runs after the warm-up and the capture (to undo the warm-up's effect on state,
    e.g. zero the shift buffers). Calling it copies the inputs into the static inputs, replays
    the graph and returns the static outputs: read or clone them before the next call. Callers
    that share one captured call across threads hold ``lock`` around the call and the read.
    ``autocast`` is the autocast state it was captured under (:func:`autocast_state`).
    """

    def __init__(
        self,
        fn: Callable,
        inputs: Sequence[Tensor],
        warmup: int = 2,
        settle: Callable[[], None] | None = None,
        backend: CudaBackend = CUDA,
    ) -> None:
        if not inputs or not all(isinstance(x, Tensor) and backend.on_device(x) for x in inputs):
            raise ValueError(f"CapturedCall needs CUDA tensors, got {_signature(inputs)}")
        self.backend = backend
        self.lock = threading.Lock()
        device = inputs[0].device
        self.autocast = autocast_state(device.type)
        self.inputs = [x.clone() for x in inputs]
        with _CAPTURE_LOCK, backend.device(device), torch.no_grad():
            with _capture_autocast(device.type, self.autocast):
                self.graph, self.outputs = backend.capture(fn, self.inputs, warmup)
        if settle is not None:
            settle()

    @property
    def signature(self) -> tuple:
        return _signature(self.inputs)

    def __call__(self, *xs: Tensor):
        if _signature(xs) != self.signature:
            raise ValueError(f"captured call expects inputs {self.signature}, got {_signature(xs)}")
        state = autocast_state(self.inputs[0].device.type)
        if state != self.autocast:
            raise ValueError(
                f"captured under autocast {self.autocast}, called under {state}: key graphs on "
                "autocast_state()"
            )
        for s, x in zip(self.inputs, xs):
            s.copy_(x)
        self.backend.replay(self.graph)
        return self.outputs


class GraphedForward:
    """``module``'s inference forward replayed from a CUDA graph per input shape.

    Calling it captures on the first call with a new input shape/dtype/device (and a new
    ``num_segments``, train/eval mode, parameter storage of ``module`` or autocast state; at most
    ``max_shapes`` captures are kept) and replays after; a clone of the output is returned.
    Inputs off CUDA, or calls with autograd on, run ``module`` eagerly. Suits a fixed test
    protocol: views ``(V, T, 3, H, W)`` of one size, where every batch but a video's last has
    one shape. Holds ``module`` weakly (see :func:`graphed`). Safe to call from several threads.
    """

    def __init__(self, module: nn.Module, max_shapes: int = 4, backend: CudaBackend = CUDA) -> None:
        self._module = weakref.ref(module)
        self.max_shapes = max_shapes
        self.backend = backend
        self._calls: dict = {}
        self._lock = threading.Lock()

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
            autocast_state(x.device.type),
        )

    def _call_for(self, x: Tensor) -> CapturedCall | None:
        key = self._key(x)
        with self._lock:
            call = self._calls.get(key)
            if call is None and len(self._calls) < self.max_shapes:
                call = self._calls[key] = CapturedCall(self.module, [x], backend=self.backend)
        return call

    def __call__(self, x: Tensor) -> Tensor:
        m = self.module
        if not self.backend.on_device(x) or torch.is_grad_enabled():
            return m(x)
        call = self._call_for(x)
        if call is None:
            return m(x)
        with call.lock:
            return call(x).clone()


_GRAPHED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_GRAPHED_LOCK = threading.Lock()


def graphed(module: nn.Module) -> Callable[[Tensor], Tensor]:
    """``module``'s :class:`GraphedForward` (one per module, kept while the module lives) when
    its parameters are on CUDA; ``module`` itself otherwise."""
    first = next(module.parameters(), None)
    if first is None or not first.is_cuda:
        return module
    with _GRAPHED_LOCK:
        g = _GRAPHED.get(module)
        if g is None:
            g = _GRAPHED[module] = GraphedForward(module)
    return g
