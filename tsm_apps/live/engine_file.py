"""An online engine file (``tsm export CK --online --engine onnxruntime``) as a
:class:`~tsm_apps.live.engine.Stepper`: ``tsm live SOURCE --checkpoint step.onnx``.

The file holds the step model (inputs ``frame (N, 3, S, S)``, ``buffer_0 .. buffer_{B-1}``;
outputs ``logits (N, K)``, ``new_buffer_0 ..``) and, in its metadata
(:mod:`tsm_apps.engine.metadata`), the checkpoint's test protocol, class names and parity
figures. A frame goes through that stored protocol (:func:`tsm_apps.data.pipeline.frame_input`,
as ``tsm test step.onnx`` decodes clips), the batch of streams through one ONNX Runtime call.

A stream's buffers are a :class:`~tsm_apps.models.shift.state.ShiftState` like a PyTorch
stream's (buffer ``i``: the engine's ``buffer_i``, the model's ``i``-th shift module; ``None``
before the first frame and after a reset: zeros). The engine file has no shift modules to bind
them to, so the stepper gives :class:`~tsm_apps.live.engine.BatchedEngine` one
:class:`BufferSlot` per buffer: the engine gathers the streams' states, binds them to the slots
(:func:`~tsm_apps.models.shift.state.stepping`) and splits them back after the step, exactly as
for a PyTorch model; :meth:`EngineStepper.forward` reads the bound buffers, runs the file and
writes the new ones. An engine whose batch axis is fixed at 1 steps the streams one after the
other (the file written by ``tsm export`` has a dynamic batch: one call for the whole batch).

ONNX Runtime runs on the CPU. Refused with one line naming the file: an ``offline`` (clip)
engine, and a file whose graph does not take the input size its metadata states.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch
from torch import Tensor, nn

from ..data.pipeline import frame_input
from ..engine.runtime import EngineModel
from ..models.shift import bound_slot
from .engine import Prepared

__all__ = ["BufferSlot", "EngineStepper"]


class BufferSlot(nn.Module):
    """Stands for the engine's ``index``-th shift buffer ``(N, *shape)`` where the batched
    engine binds the streams' states (module docstring); it computes nothing."""

    def __init__(self, index: int, shape: Sequence[int]) -> None:
        super().__init__()
        self.index, self.shape = index, tuple(int(s) for s in shape)


def _dims(arg: Any, path: Path) -> tuple:
    """The fixed dims after the batch axis of the ONNX input ``arg`` (ValueError if symbolic)."""
    rest = tuple(arg.shape[1:])
    if not all(isinstance(d, int) for d in rest):
        raise ValueError(f"{path}: input '{arg.name}' has symbolic dims {rest}")
    return rest


class EngineStepper:
    """The online engine file ``engine`` (an :class:`~tsm_apps.engine.runtime.EngineModel`)
    streamed under its stored protocol (module docstring)."""

    def __init__(self, engine: EngineModel) -> None:
        info, path = engine.info, engine.path
        if info.kind != "online":
            raise ValueError(
                f"{path}: an {info.kind} (clip) engine; tsm live steps an online engine "
                "(tsm export CHECKPOINT --online --engine onnxruntime)"
            )
        inputs = engine.session.get_inputs()
        if not inputs or inputs[0].name != "frame":
            raise ValueError(f"{path}: no 'frame' input: not an online step engine")
        s = info.input_size
        frame = _dims(inputs[0], path)
        if frame != (3, s, s) or info.protocol.crop_size != s or info.protocol.view != "crop":
            raise ValueError(
                f"{path}: the engine's graph takes frames {frame}, its metadata says "
                f"{s}x{s} ({info.protocol.view} of {info.protocol.crop_size} px): input sizes differ"
            )
        batch = inputs[0].shape[0]
        if isinstance(batch, int) and batch != 1:
            raise ValueError(f"{path}: a fixed batch of {batch}; tsm live needs 1 or a dynamic one")
        self.model = engine
        self.path = path
        self.session = engine.session
        self.protocol = info.protocol
        self.names = list(info.names)
        self.rows = 1 if isinstance(batch, int) else None  # rows an ONNX Runtime call takes
        self.buffer_names = [i.name for i in inputs[1:]]
        self.modules = [BufferSlot(i, _dims(a, path)) for i, a in enumerate(inputs[1:])]
        self.output_names = [o.name for o in engine.session.get_outputs()]
        self.device = torch.device("cpu")

    @classmethod
    def from_file(cls, path: str | os.PathLike) -> "EngineStepper":
        return cls(EngineModel(path))

    @property
    def kind(self) -> str:
        info = self.model.info
        return f"TSM engine ({info.precision}, ONNX Runtime CPU)"

    def prepare(self, frame: np.ndarray) -> Prepared:
        x = frame_input(frame, self.protocol)
        return Prepared(x, tuple(x.shape[1:]))

    def forward(self, batch: Tensor) -> tuple:
        """``(logits (B, K),)`` of ``batch (B, 3, S, S)``; inside a ``stepping`` block of
        :attr:`modules`, the bound buffers are read (``None``: zeros) and replaced."""
        x = batch.detach().cpu().float().contiguous().numpy()
        bound = bound_slot(self.modules[0]) if self.modules else None
        if self.modules and bound is None:
            raise ValueError(f"{self.path}: a step needs the streams' buffers bound (stepping)")
        state = bound[0] if bound else None
        old = [
            np.zeros((len(x), *slot.shape), np.float32) if b is None else b.numpy()
            for slot, b in zip(self.modules, state.buffers if state else [])
        ]
        rows = self.rows or len(x)
        parts = [
            self._run(x[i : i + rows], [b[i : i + rows] for b in old])
            for i in range(0, len(x), rows)
        ]
        logits, *new = (np.concatenate(p) for p in zip(*parts))
        if state is not None:
            state.buffers = [torch.from_numpy(b) for b in new]
        return (torch.from_numpy(logits),)

    def _run(self, frames: np.ndarray, buffers: list) -> list:
        """One ONNX Runtime call; its errors (which derive from ``Exception`` only) become a
        RuntimeError naming the file, so the scheduler fails the streams in one line each."""
        from onnxruntime.capi import onnxruntime_pybind11_state as ort_errors

        feeds = {"frame": frames, **dict(zip(self.buffer_names, buffers))}
        try:
            return self.session.run(self.output_names, feeds)
        except (ort_errors.InvalidArgument, ort_errors.Fail, ort_errors.RuntimeException) as e:
            reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise RuntimeError(f"{self.path}: ONNX Runtime: {reason}") from None

    def finish(self, outputs: tuple, prepared: Sequence[Prepared]) -> list:
        logits = outputs[0][: len(prepared)].float()
        return list(logits.unbind(0))
