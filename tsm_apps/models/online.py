"""Online (streaming) TSM: one frame in, one prediction out, one shift buffer per shifted block.

A model built with ``shift='online'`` gives, frame by frame, exactly the per-frame features it
gives on the whole clip at once, because the online shift only reads the past.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Sequence

import torch
from torch import Tensor, nn

from .shift import TemporalShift


def shift_modules(model: nn.Module) -> list:
    """The model's ``TemporalShift`` modules in registration order (the buffer order)."""
    return [m for m in model.modules() if isinstance(m, TemporalShift)]


def _check_online(model: nn.Module) -> list:
    mods = shift_modules(model)
    offline = [m for m in mods if not m.online]
    if offline:
        raise ValueError("streaming needs a model built with shift='online' (causal); this one "
                         f"has {len(offline)} offline (bi-directional) shift modules")
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
        m.streaming, m.buffer = True, None
    try:
        yield mods
    finally:
        for m in mods:
            m.streaming, m.buffer = False, None


class OnlineRecognizer:
    """Stream frames through an online-TSM :class:`~tsm_apps.models.recognizer.Recognizer`.

    ``step(frame (N, 3, H, W)) -> logits (N, num_classes)`` of that frame; ``reset()`` starts
    new streams. Use as a context manager, or call ``close()``, to leave streaming mode.
    """

    def __init__(self, model: nn.Module) -> None:
        self.model = model
        self._ctx = streaming(model)
        self._mods = self._ctx.__enter__()

    def reset(self) -> None:
        for m in self._mods:
            m.buffer = None

    @torch.no_grad()
    def step_features(self, frame: Tensor) -> Tensor:
        """Last conv features ``(N, C, h, w)`` of one frame per stream."""
        if frame.dim() != 4 or frame.shape[1] != 3:
            raise ValueError(f"OnlineRecognizer.step expects (N, 3, H, W), got {tuple(frame.shape)}")
        return self.model.backbone(frame)

    @torch.no_grad()
    def step(self, frame: Tensor) -> Tensor:
        f = self.step_features(frame)
        return self.model.fc(f.mean(dim=(2, 3)))

    @property
    def cache_bytes(self) -> int:
        """Bytes held in shift buffers now (after at least one step).

        Each buffer is a compact copy of its block's ``fold`` channels that owns its storage, so
        this is the memory the stream retains between frames (the frames themselves are freed).
        """
        return sum(m.buffer.untyped_storage().nbytes() for m in self._mods
                   if m.buffer is not None)

    def close(self) -> None:
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
