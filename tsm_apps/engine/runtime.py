"""Running an engine file in ONNX Runtime as a recognizer: :class:`EngineModel` takes clips
``(N, T, C, S, S)`` and gives logits ``(N, K)`` as the checkpoint's model does, so the clip
pipeline and the scoring of ``tsm test`` run it unchanged (:func:`open_engine`).

An ``offline`` engine runs the clip model once; an ``online`` engine steps the frames of each
clip one by one from zero buffers, feeding the new buffers back, and averages the frames' logits
(the recognizer's average consensus: the causal model's answer on the clip).
"""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Optional

import numpy as np
import torch
from torch import Tensor, nn

from ..checkpoint.opening import Checkpoint
from .metadata import EngineInfo, info_from_map

__all__ = ["EngineModel", "open_engine", "session"]


def session(path: str | os.PathLike, providers: Optional[list] = None):
    """An ONNX Runtime session of ``path`` (CPU provider unless ``providers`` are given);
    FileNotFoundError, or ValueError naming the file when ONNX Runtime cannot load it."""
    import onnxruntime as ort
    from onnxruntime.capi import onnxruntime_pybind11_state as errors

    if not Path(path).is_file():
        raise FileNotFoundError(f"engine file not found: {path}")
    try:
        return ort.InferenceSession(str(path), providers=providers or ["CPUExecutionProvider"])
    except (errors.InvalidProtobuf, errors.InvalidGraph, errors.Fail) as e:
        raise ValueError(f"{path}: ONNX Runtime cannot load it ({type(e).__name__})") from None


class EngineModel(nn.Module):
    """An engine file's session as a recognizer: ``forward(clips (N, T, C, S, S)) -> (N, K)``
    (module docstring); ``step_logits`` gives an online engine's per-frame logits."""

    def __init__(self, path: str | os.PathLike, providers: Optional[list] = None) -> None:
        super().__init__()
        self.path = Path(path)
        self.session = session(path, providers)
        meta = self.session.get_modelmeta().custom_metadata_map
        self.info: EngineInfo = info_from_map(meta, str(path))
        self.num_segments = self.info.num_segments
        self.config = SimpleNamespace(
            num_segments=self.info.num_segments,
            num_classes=len(self.info.names),
            arch=self.info.arch,
            shift=self.info.kind,
        )

    def _check(self, clips: Tensor) -> np.ndarray:
        s = self.info.input_size
        if clips.dim() != 5 or tuple(clips.shape[3:]) != (s, s):
            raise ValueError(
                f"{self.path}: the engine takes clips (N, T, C, {s}, {s}), got {tuple(clips.shape)}"
            )
        if self.info.kind == "offline" and clips.shape[1] != self.info.num_segments:
            raise ValueError(
                f"{self.path}: the clip engine takes T={self.info.num_segments}, got {clips.shape[1]}"
            )
        return clips.detach().cpu().float().numpy()

    def step_logits(self, clips: Tensor) -> Tensor:
        """``(N, T, K)``: an online engine's logits after each frame of ``clips``."""
        x = self._check(clips)
        names = [i.name for i in self.session.get_inputs()][1:]
        buffers = [
            np.zeros((len(x), *i.shape[1:]), np.float32) for i in self.session.get_inputs()[1:]
        ]
        out = []
        for t in range(x.shape[1]):
            logits, *buffers = self.session.run(
                None, {"frame": x[:, t], **dict(zip(names, buffers))}
            )
            out.append(logits)
        return torch.from_numpy(np.stack(out, 1)).float()

    def forward(self, clips: Tensor) -> Tensor:
        if self.info.kind == "online":
            return self.step_logits(clips).mean(1)
        (logits,) = self.session.run(None, {"clips": self._check(clips)})
        return torch.from_numpy(logits).float()


def _fixed(info: EngineInfo, path: Path, segments: Optional[int], options: dict) -> None:
    size, view = options.get("crop_size"), options.get("view")
    if size not in (None, info.input_size):
        raise ValueError(
            f"{path}: the engine takes {info.input_size}x{info.input_size} views, not {size}"
        )
    if view == "frame":
        raise ValueError(f"{path}: the engine takes square crops; view='frame' needs a checkpoint")
    if info.kind == "offline" and segments not in (None, info.num_segments):
        raise ValueError(f"{path}: the clip engine takes T={info.num_segments}, not {segments}")


def open_engine(
    path: str | os.PathLike,
    classes: Optional[str] = None,
    segments: Optional[int] = None,
    **options: Any,
) -> Checkpoint:
    """An engine file as a :class:`~tsm_apps.checkpoint.opening.Checkpoint` (layout ``engine``):
    its stored protocol (``options`` such as ``clips=10`` change it, but not the input size),
    class names (``classes``: a class file instead) and :class:`EngineModel`."""
    from ..data.classes import read_class_file

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"engine file not found: {path}")
    model = EngineModel(path)
    _fixed(model.info, path, segments, options)
    if segments:
        model.num_segments = model.config.num_segments = int(segments)
    names = read_class_file(classes) if classes else list(model.info.names)
    if len(names) != len(model.info.names):
        raise ValueError(
            f"{classes}: {len(names)} names, but {path} has {len(model.info.names)} classes"
        )
    protocol = model.info.protocol.with_options(**options)
    return Checkpoint(model, names, protocol, path, "engine")
