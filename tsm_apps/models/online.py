"""Online (streaming) TSM: one frame in, one prediction out, one shift buffer per shifted block.

A model built with ``shift='online'`` gives, frame by frame, exactly the per-frame features it
gives on the whole clip at once, because the online shift only reads the past.

:class:`OnlineRecognizer` runs a step one of three ways (``mode``): ``"eager"`` (a new buffer
per block and step), ``"static"`` (preallocated buffers written in place, zeroed by ``reset()``)
and ``"graph"`` (the static step captured once into a CUDA graph and replayed: one launch per
frame instead of one per kernel). ``"auto"``, the default, is ``"graph"`` on CUDA and
``"eager"`` elsewhere.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Sequence

import torch
from torch import Tensor, nn

from .cuda_graph import CapturedCall
from .shift_wrapper import TemporalShift

MODES = ("auto", "eager", "static", "graph")


def shift_modules(model: nn.Module) -> list:
    """The model's ``TemporalShift`` modules in registration order (the buffer order)."""
    return [m for m in model.modules() if isinstance(m, TemporalShift)]


def _check_online(model: nn.Module) -> list:
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


@contextmanager
def streaming(model: nn.Module) -> Iterator[list]:
    """Put every shift module of ``model`` in streaming mode with empty buffers.

    Inside the block the model takes one frame per stream, ``(N, 3, H, W)``. On exit (also on
    error) the modules return to clip mode and the buffers are dropped.
    """
    mods = _check_online(model)
    for m in mods:
        m.streaming, m.static, m.buffer = True, False, None
    try:
        yield mods
    finally:
        for m in mods:
            m.streaming, m.static, m.buffer = False, False, None


@torch.no_grad()
def static_buffers(model: nn.Module, mods: list, frame: Tensor) -> list:
    """Give every streaming shift module of ``model`` a zeroed static buffer for frames like
    ``frame`` ``(N, 3, H, W)`` (shapes and memory formats from one eager dry step); returns
    the buffers ``(N, C_i // fold_div, h_i, w_i)`` in module order."""
    for m in mods:
        m.static, m.buffer = False, None
    model.backbone(torch.zeros_like(frame))
    for m in mods:
        m.static, m.buffer = True, torch.zeros_like(m.buffer)
    return [m.buffer for m in mods]


class OnlineRecognizer:
    """Stream frames through an online-TSM :class:`~tsm_apps.models.recognizer.Recognizer`.

    ``step(frame (N, 3, H, W)) -> logits (N, num_classes)`` of that frame; ``reset()`` starts
    new streams. Use as a context manager, or call ``close()``, to leave streaming mode.
    ``mode`` (module docstring): ``"auto"`` captures a CUDA graph on CUDA; ``"eager"`` turns it
    off. With static buffers a new frame shape is accepted right after ``reset()`` (or at the
    first step) and re-allocates the buffers (and re-captures the graph).
    """

    def __init__(self, model: nn.Module, mode: str = "auto") -> None:
        if mode not in MODES:
            raise ValueError(f"OnlineRecognizer mode must be one of {MODES}, got {mode!r}")
        self.model = model
        self.mode = mode
        self._ctx = streaming(model)
        self._mods = self._ctx.__enter__()
        self._shape = None  # frame signature the static buffers (and graph) are built for
        self._fresh = True  # buffers hold zeros: a new frame shape may start here
        self._graph: CapturedCall | None = None

    def _resolved(self, frame: Tensor) -> str:
        if self.mode == "auto":
            return "graph" if frame.is_cuda else "eager"
        return self.mode

    def reset(self) -> None:
        """Start new streams: eager buffers are dropped, static buffers zeroed in place."""
        for m in self._mods:
            if m.static:
                m.buffer.zero_()
            else:
                m.buffer = None
        self._fresh = True

    def _features(self, frame: Tensor) -> Tensor:
        return self.model.backbone(frame)

    def _both(self, frame: Tensor) -> tuple:
        f = self.model.backbone(frame)
        return f, self.model.fc(f.mean(dim=(2, 3)))

    def _prepare(self, frame: Tensor, mode: str) -> None:
        """Allocate static buffers (and capture the graph) for ``frame``'s shape if needed."""
        key = (tuple(frame.shape), frame.dtype, frame.device, frame.stride())
        if key == self._shape:
            return
        if not self._fresh:
            raise ValueError(
                f"OnlineRecognizer: frame {tuple(frame.shape)} differs from the "
                f"stream's {self._shape[0]}; call reset() to start new streams"
            )
        static_buffers(self.model, self._mods, frame)
        self._graph = None
        if mode == "graph":
            self._graph = CapturedCall(self._both, [frame], settle=self.reset)
        self._shape = key

    @torch.no_grad()
    def _run(self, frame: Tensor) -> tuple:
        if frame.dim() != 4 or frame.shape[1] != 3:
            raise ValueError(
                f"OnlineRecognizer.step expects (N, 3, H, W), got {tuple(frame.shape)}"
            )
        mode = self._resolved(frame)
        if mode == "eager":
            f = self._features(frame)
            return f, None
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
        return sum(m.buffer.untyped_storage().nbytes() for m in self._mods if m.buffer is not None)

    def close(self) -> None:
        self._graph = None
        self._ctx.__exit__(None, None, None)

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
        self.mods = _check_online(model)

    def forward(self, frame: Tensor, *buffers: Tensor) -> tuple:
        if len(buffers) != len(self.mods):
            raise ValueError(f"OnlineStep expects {len(self.mods)} buffers, got {len(buffers)}")
        with streaming(self.model):
            for m, b in zip(self.mods, buffers):
                m.buffer = b
            f = self.model.backbone(frame)
            new = tuple(m.buffer for m in self.mods)
        return (self.model.fc(f.mean(dim=(2, 3))),) + new

    @torch.no_grad()
    def buffer_shapes(self, frame_shape: Sequence[int]) -> list:
        """Buffer shapes for frames of ``frame_shape`` ``(N, 3, H, W)``, found by one dry step
        (on the model's device, in its dtype)."""
        p = next(self.model.parameters())
        with streaming(self.model):
            self.model.backbone(torch.zeros(*frame_shape, device=p.device, dtype=p.dtype))
            return [tuple(m.buffer.shape) for m in self.mods]
