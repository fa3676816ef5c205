"""Online (streaming) TSM: one frame in, one prediction out, one shift buffer per shifted block.

A model built with ``shift='online'`` gives, frame by frame, exactly the per-frame features it
gives on the whole clip at once, because the online shift only reads the past. The buffers a
stream carries from frame to frame are a :class:`~.shift.state.ShiftState` owned by the
stream, bound to the model for one step (:func:`~.shift.state.stepping`); the model holds none,
so any number of streams can share it.

:class:`OnlineRecognizer` steps ``N`` streams together one of three ways (``mode``): ``"eager"``
(a new buffer per block and step), ``"static"`` (preallocated buffers written in place, zeroed
by ``reset()``) and ``"graph"`` (the static step captured once into a CUDA graph and replayed:
one launch per frame instead of one per kernel). ``"auto"``, the default, is ``"graph"`` on
CUDA and ``"eager"`` elsewhere. Many streams that join and leave at any frame are the
batched engine's (:mod:`tsm_apps.live`).
"""

from __future__ import annotations

from typing import Sequence

import torch
from torch import Tensor, nn

from .cuda_graph import CUDA, CapturedCall, CudaBackend, autocast_state
from .shift import ShiftState, TemporalShift, stepping

MODES = ("auto", "eager", "static", "graph")


def shift_modules(model: nn.Module) -> list:
    """The model's ``TemporalShift`` modules in registration order (the buffer order)."""
    return [m for m in model.modules() if isinstance(m, TemporalShift)]


def online_modules(model: nn.Module) -> list:
    """The shift modules of a model that can stream (all causal; no temporal pool or non-local
    block); ValueError naming what is in the way otherwise."""
    mods = shift_modules(model)
    offline = [m for m in mods if not m.online]
    if offline:
        raise ValueError(
            "streaming needs a model built with shift='online' (causal); this one "
            f"has {len(offline)} offline (bi-directional) shift modules"
        )
    for m in model.modules():
        name = type(m).__name__
        if name in ("TemporalPool", "NonLocalWrapper"):
            raise ValueError(f"streaming is not defined for models with {name}")
    return mods


@torch.no_grad()
def static_state(run, mods: Sequence[nn.Module], frame: Tensor) -> ShiftState:
    """A static :class:`ShiftState` of zeroed buffers for frames like ``frame`` ``(N, 3, H, W)``
    (shapes and memory formats from one eager dry step ``run(frame)`` on a fresh state)."""
    dry = ShiftState(len(mods))
    with stepping(mods, dry):
        run(torch.zeros_like(frame))
    state = ShiftState(len(mods), static=True)
    state.buffers = [torch.zeros_like(b) for b in dry.buffers]
    return state


class OnlineRecognizer:
    """Stream frames of ``N`` streams together through an online-TSM
    :class:`~tsm_apps.models.recognizer.Recognizer`.

    ``step(frame (N, 3, H, W)) -> logits (N, num_classes)`` of that frame; ``reset()`` starts
    new streams. Its :class:`ShiftState` is its own (``state``): several recognizers may share
    one model. ``mode`` (module docstring): ``"auto"`` captures a CUDA graph on CUDA; ``"eager"``
    turns it off. With static buffers a new frame shape is accepted right after ``reset()`` (or
    at the first step) and re-allocates the buffers (and re-captures the graph). Usable as a
    context manager; ``close()`` drops the graph. ``backend``: what captures the graph
    (:data:`~tsm_apps.models.cuda_graph.CUDA`; a test stands a recording double in).
    """

    def __init__(self, model: nn.Module, mode: str = "auto", backend: CudaBackend = CUDA) -> None:
        if mode not in MODES:
            raise ValueError(f"OnlineRecognizer mode must be one of {MODES}, got {mode!r}")
        self.model = model
        self.mode = mode
        self.backend = backend
        self._mods = online_modules(model)
        self.state = ShiftState(len(self._mods))
        self._shape = None  # frame signature the static buffers (and graph) are built for
        self._fresh = True  # buffers hold zeros: a new frame shape may start here
        self._graph: CapturedCall | None = None

    def _resolved(self, frame: Tensor) -> str:
        if self.mode == "auto":
            return "graph" if frame.is_cuda else "eager"
        return self.mode

    def reset(self) -> None:
        """Start new streams: eager buffers are dropped, static buffers zeroed in place."""
        self.state.reset()
        self._fresh = True

    def _both(self, frame: Tensor) -> tuple:
        with stepping(self._mods, self.state):
            f = self.model.backbone(frame)
        return f, self.model.fc(f.mean(dim=(2, 3)))

    def _prepare(self, frame: Tensor, mode: str) -> None:
        """Allocate static buffers (and capture the graph) for ``frame``'s shape if needed."""
        key = (tuple(frame.shape), frame.dtype, frame.device, frame.stride())
        key += (autocast_state(frame.device.type),)
        if key == self._shape:
            return
        if not self._fresh:
            raise ValueError(
                f"OnlineRecognizer: frame {tuple(frame.shape)} differs from the "
                f"stream's {self._shape[0]} (or autocast changed); call reset() to start "
                "new streams"
            )
        self.state = static_state(self.model.backbone, self._mods, frame)
        self._graph = None
        if mode == "graph":
            self._graph = CapturedCall(self._both, [frame], settle=self.reset, backend=self.backend)
        self._shape = key

    @torch.no_grad()
    def _run(self, frame: Tensor) -> tuple:
        if frame.dim() != 4 or frame.shape[1] != 3:
            raise ValueError(
                f"OnlineRecognizer.step expects (N, 3, H, W), got {tuple(frame.shape)}"
            )
        mode = self._resolved(frame)
        if mode == "eager":
            with stepping(self._mods, self.state):
                return self.model.backbone(frame), None
        self._prepare(frame, mode)
        self._fresh = False
        if self._graph is not None:
            f, logits = self._graph(frame)
            return f.clone(), logits.clone()
        return self._both(frame)

    def step_features(self, frame: Tensor) -> Tensor:
        """Last conv features ``(N, C, h, w)`` of one frame per stream."""
        return self._run(frame)[0]

    @torch.no_grad()
    def step(self, frame: Tensor) -> Tensor:
        f, logits = self._run(frame)
        return self.model.fc(f.mean(dim=(2, 3))) if logits is None else logits

    @property
    def cache_bytes(self) -> int:
        """Bytes held in shift buffers now (after at least one step).

        Each buffer is a compact copy of its block's ``fold`` channels that owns its storage, so
        this is the memory the stream retains between frames (the frames themselves are freed).
        """
        return self.state.nbytes

    def close(self) -> None:
        self._graph = None

    def __enter__(self) -> "OnlineRecognizer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class OnlineStep(nn.Module):
    """Pure-function form of one streaming step, for export: buffers are explicit inputs/outputs.

    ``forward(frame (N, 3, H, W), *buffers) -> (logits (N, K), *new_buffers)``; buffer ``i`` has
    shape ``(N, C_i // fold_div, h_i, w_i)`` (see :meth:`buffer_shapes`).
    """

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model
        self.mods = online_modules(model)

    def forward(self, frame: Tensor, *buffers: Tensor) -> tuple:
        if len(buffers) != len(self.mods):
            raise ValueError(f"OnlineStep expects {len(self.mods)} buffers, got {len(buffers)}")
        state = ShiftState(len(self.mods))
        state.buffers = list(buffers)
        with stepping(self.mods, state):
            f = self.model.backbone(frame)
        return (self.model.fc(f.mean(dim=(2, 3))),) + tuple(state.buffers)

    @torch.no_grad()
    def buffer_shapes(self, frame_shape: Sequence[int]) -> list:
        """Buffer shapes for frames of ``frame_shape`` ``(N, 3, H, W)``, found by one dry step
        (on the model's device, in its dtype)."""
        p = next(self.model.parameters())
        frame = torch.zeros(*frame_shape, device=p.device, dtype=p.dtype)
        return [tuple(b.shape) for b in static_state(self.model.backbone, self.mods, frame).buffers]
