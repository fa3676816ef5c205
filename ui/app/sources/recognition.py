"""Any recognizer checkpoint on any video: attention maps, top-5, and the online stream.

Checkpoints of every layout :func:`tsm_apps.load_checkpoint` reads (ours, the official TSM
repository's, mmaction2's); clips sampled as in TSN's test mode (the centre frame of each of
``T`` equal segments), shorter side resized to the input size, centre-cropped, normalised.
"""
from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from .shared import session_copy

__all__ = ["LoadedRecognizer", "ModelMaps", "ClipInput", "load_recognizer",
           "load_online", "prepare_clip", "prepare_frame", "model_maps", "top_k",
           "maps_overlay", "map_methods", "LiveRecognizer", "for_session"]

_LOAD_ERRORS = (ValueError, KeyError, TypeError, RuntimeError, OSError, EOFError,
                pickle.UnpicklingError)


@dataclass
class LoadedRecognizer:
    """A recognizer (eval mode, on CPU or CUDA) and the names of its ``num_classes`` outputs."""
    model: Any
    names: list
    path: Path

    @property
    def shift(self) -> Optional[str]:
        return self.model.config.shift

    @property
    def kind(self) -> str:
        return "TSN (no shift)" if self.shift is None else f"TSM ({self.shift} shift)"


@dataclass
class ClipInput:
    """A sampled clip: ``input (T, 3, S, S)`` normalised, ``frames (T, S, S, 3)`` uint8 (the
    pixels the maps explain), the frame ``indices`` taken from the video and the test
    ``protocol`` that made it (a flow stream on the same clip goes through the same one)."""
    input: Any
    frames: np.ndarray
    indices: np.ndarray
    protocol: Any = None


@dataclass
class ModelMaps:
    """One model's answer on a clip: raw ``maps (T, S, S)`` of class ``explained`` and the
    clip's class probabilities ``probs (K,)``."""
    maps: np.ndarray
    probs: np.ndarray
    explained: int


def map_methods() -> tuple:
    """CAM and the Grad-CAM family (:data:`dissect.METHODS`)."""
    from dissect import METHODS

    return tuple(METHODS)


def _device():
    import torch

    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def load_recognizer(path: Path, **overrides: Any) -> LoadedRecognizer:
    """The recognizer of checkpoint ``path`` and its class names; ValueError naming the file
    and the reason when it cannot be used."""
    from tsm_apps import load_checkpoint
    from tsm_apps.data.classes import class_names

    path = Path(path)
    if not path.is_file():
        raise ValueError(f"checkpoint not found: {path}")
    try:
        model = load_checkpoint(path, **overrides).to(_device()).eval()
        names = class_names(model.config.num_classes, checkpoint=path)
    except _LOAD_ERRORS as e:
        raise ValueError(f"cannot use {path.name} as a recognizer: {e}") from None
    return LoadedRecognizer(model, list(names), path)


def for_session(rec: LoadedRecognizer) -> LoadedRecognizer:
    """``rec`` with its own module tree (weights shared): a use that sets state on the model
    (CAM hooks, the number of segments) leaves other sessions' uses of ``rec`` alone."""
    return LoadedRecognizer(session_copy(rec.model), rec.names, rec.path)


def load_online(path: Path) -> LoadedRecognizer:
    """The checkpoint's recognizer with the causal (online) shift for streaming; a TSN stays
    TSN (per-frame, nothing carried)."""
    first = load_recognizer(path)
    return first if first.shift is None else load_recognizer(path, shift="online")


def _square(size: int):
    from tsm_apps.data.protocol import TestProtocol

    return TestProtocol("app", scale_size=size, crop_size=size, source="the app's size setting")


def prepare_clip(frames: np.ndarray, num_segments: int, size: int) -> ClipInput:
    """The clip pipeline on uint8 ``(F, H, W, 3)`` frames in memory: TSN test sampling of
    ``T = num_segments`` frames, shorter side to ``size``, centre crop, normalised."""
    from tsm_apps.data.pipeline import clip_indices, views_from_frames

    proto = _square(size)
    idx = clip_indices(proto, len(frames), num_segments)
    views = views_from_frames(lambda i: np.ascontiguousarray(frames[i]), idx, proto)
    return ClipInput(views.input[0], views.frames[0], idx[0], proto)


def prepare_frame(frame: np.ndarray, size: int):
    """One uint8 ``(H, W, 3)`` frame as the input ``(1, 3, S, S)`` of an online step (the
    pipeline's centre view)."""
    from tsm_apps.data.pipeline import views_from_frames

    views = views_from_frames(lambda i: frame[None], np.zeros((1, 1), np.int64), _square(size))
    return views.input[0]


def model_maps(rec: LoadedRecognizer, clip: ClipInput, method: str = "cam",
               class_idx: Optional[int] = None) -> ModelMaps:
    """``method``'s maps of ``rec`` on ``clip`` for ``class_idx`` (None: its top-1)."""
    import torch
    from dissect import compute_clip_maps

    if class_idx is not None and not 0 <= class_idx < len(rec.names):
        raise ValueError(f"class {class_idx} is out of range for {rec.path.name} "
                         f"({len(rec.names)} classes)")
    rec.model.num_segments = len(clip.indices)
    out = compute_clip_maps(rec.model, clip.input.to(_device()), method, class_idx)
    probs = torch.softmax(out.logits[0].detach().float(), 0).cpu().numpy()
    return ModelMaps(out.maps[0].detach().float().cpu().numpy(), probs, int(out.classes[0]))


def top_k(probs: np.ndarray, names: Sequence[str], k: int = 5) -> list[tuple[str, float]]:
    """The ``k`` most probable classes as ``(name, probability)``, best first."""
    order = np.argsort(-np.asarray(probs), kind="stable")[:k]
    return [(str(names[i]), float(probs[i])) for i in order]


def maps_overlay(frames: np.ndarray, maps: np.ndarray, per: str = "clip") -> np.ndarray:
    """Maps over frames, ``(T, S, S, 3)`` uint8 (:func:`dissect.overlay`)."""
    from dissect import overlay

    return overlay(frames, maps, per=per)


class LiveRecognizer:
    """The online recognizer on a video, frame by frame: ``step(frame)`` returns that frame's
    probabilities and keeps the running mean of the logits of the frames seen so far.

    The shift buffers belong to this object (:class:`tsm_apps.OnlineStep`: explicit buffers in
    and out) and it steps its own module tree (weights shared, :func:`.shared.session_copy`),
    so several streams, of any sessions, can share one loaded model."""

    def __init__(self, rec: LoadedRecognizer, size: int) -> None:
        import torch
        from tsm_apps import OnlineStep

        self.rec, self.size = rec, size
        self.stepper = OnlineStep(session_copy(rec.model))
        with torch.no_grad():
            shapes = self.stepper.buffer_shapes((1, 3, size, size))
        p = next(rec.model.parameters())
        self.buffers = tuple(torch.zeros(s, dtype=p.dtype, device=p.device) for s in shapes)
        self.seen, self._sum = 0, None

    def step(self, frame: np.ndarray) -> np.ndarray:
        """The probabilities ``(K,)`` of uint8 ``(H, W, 3)`` ``frame`` given the frames before."""
        import torch

        with torch.no_grad():
            out = self.stepper(prepare_frame(frame, self.size).to(_device()), *self.buffers)
        self.buffers = tuple(out[1:])
        logits = out[0][0].float().cpu()
        self._sum = logits if self._sum is None else self._sum + logits
        self.seen += 1
        return torch.softmax(logits, 0).numpy()

    def running(self) -> np.ndarray:
        """Probabilities of the mean logits of every frame seen."""
        import torch

        return torch.softmax(self._sum / self.seen, 0).numpy()

    @property
    def cache_bytes(self) -> int:
        """Bytes of the shift buffers carried to the next frame."""
        return sum(b.numel() * b.element_size() for b in self.buffers)
