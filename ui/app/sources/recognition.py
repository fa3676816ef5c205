"""Any recognizer checkpoint on any video: attention maps, top-5, and the online stream.

Checkpoints of every layout :func:`tsm_apps.load_checkpoint` reads (ours, the official TSM
repository's, mmaction2's). Each is seen through its own test protocol
(:mod:`tsm_apps.data.protocol`) by the one clip pipeline: the top-5 is
:func:`tsm_apps.evaluation.predict`'s, the answer ``tsm test`` gives; the maps explain the
protocol's first view (its centre crop, or the whole frame with ``view='frame'``) and are drawn on
the frames as they are, over the region the model saw.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from .shared import session_copy

__all__ = [
    "LoadedRecognizer",
    "ModelMaps",
    "ClipInput",
    "load_recognizer",
    "prepare_clip",
    "model_maps",
    "top_classes",
    "maps_on_frames",
    "map_methods",
    "for_session",
]

_LOAD_ERRORS = (
    ValueError,
    KeyError,
    TypeError,
    RuntimeError,
    OSError,
    EOFError,
    pickle.UnpicklingError,
)


@dataclass
class LoadedRecognizer:
    """A recognizer (eval mode, on CPU or CUDA), the names of its ``num_classes`` outputs, the
    file, and the opened checkpoint (:class:`tsm_apps.evaluation.Checkpoint`: its protocol)."""

    model: Any
    names: list
    path: Path
    checkpoint: Any = None

    @property
    def protocol(self) -> Any:
        return self.checkpoint.protocol

    @property
    def shift(self) -> Optional[str]:
        return self.model.config.shift

    @property
    def kind(self) -> str:
        return "TSN (no shift)" if self.shift is None else f"TSM ({self.shift} shift)"


@dataclass
class ClipInput:
    """A sampled clip: ``input (T, 3, S, S)`` normalised, ``frames (T, S, S, 3)`` uint8 (the
    pixels the maps explain), the frame ``indices`` taken from the video, the test ``protocol``
    that made it (a flow stream on the same clip goes through the same one), and for display the
    video's own frames at those indices ``context (T, H, W, 3)`` with the view's box
    ``(x0, y0, x1, y1)`` in their pixels."""

    input: Any
    frames: np.ndarray
    indices: np.ndarray
    protocol: Any = None
    context: Optional[np.ndarray] = None
    box: Optional[tuple] = None


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
    from tsm_apps.distributed import auto_device

    return auto_device()


def load_recognizer(path: Path, **overrides: Any) -> LoadedRecognizer:
    """The recognizer of checkpoint ``path`` and its class names; ValueError naming the file
    and the reason when it cannot be used."""
    from tsm_apps.evaluation import open_checkpoint

    path = Path(path)
    if not path.is_file():
        raise ValueError(f"checkpoint not found: {path}")
    try:
        ck = open_checkpoint(path, device=_device(), model_overrides=overrides)
    except _LOAD_ERRORS as e:
        raise ValueError(f"cannot use {path.name} as a recognizer: {e}") from None
    return LoadedRecognizer(ck.model, ck.names, path, ck)


def for_session(rec: LoadedRecognizer) -> LoadedRecognizer:
    """``rec`` with its own module tree (weights shared): a use that sets state on the model
    (CAM hooks, the number of segments) leaves other sessions' uses of ``rec`` alone."""
    import dataclasses

    model = session_copy(rec.model)
    ck = dataclasses.replace(rec.checkpoint, model=model) if rec.checkpoint else None
    return LoadedRecognizer(model, rec.names, rec.path, ck)


def _display(
    frames: Optional[np.ndarray], indices: np.ndarray, path: Optional[Path], views
) -> tuple:
    """The video's frames at ``indices`` as the app holds them (working resolution) and the
    first view's box in their pixels."""
    from tsm_apps.data.video import read_video_frames

    have = frames is not None and len(frames) > int(indices.max())
    shown = frames[indices] if have else read_video_frames(path, indices)
    return np.ascontiguousarray(shown), views.box_in(shown.shape[1:3])


def prepare_clip(
    rec: LoadedRecognizer,
    frames: Optional[np.ndarray] = None,
    path: Optional[Path] = None,
    view: str = "crop",
) -> tuple:
    """``(ClipInput, probs (K,))``: ``rec``'s answer on a video under its test protocol --
    :func:`tsm_apps.evaluation.predict` on the file ``path`` when there is one (the frames
    ``tsm test`` reads), else on ``frames`` uint8 ``(F, H, W, 3)`` in memory -- and the clip of
    its first view, the one the maps explain (``view='frame'``: the whole frame)."""
    import dataclasses

    from tsm_apps.evaluation import predict

    ck = rec.checkpoint
    if view != "crop":
        ck = dataclasses.replace(ck, protocol=ck.protocol.with_options(view=view))
    use_file = path is not None and Path(path).is_file()
    pred = predict(ck, Path(path) if use_file else None, None if use_file else frames)
    views, idx = pred.views, pred.indices[0]
    proto = ck.protocol.with_options(clips=1, crops=1)
    context, box = _display(frames, idx, Path(path) if use_file else None, views)
    clip = ClipInput(views.input[0], views.frames[0], idx, proto, context, box)
    return clip, pred.probs.numpy()


def model_maps(
    rec: LoadedRecognizer,
    clip: ClipInput,
    method: str = "cam",
    class_idx: Optional[int] = None,
    probs: Optional[np.ndarray] = None,
) -> ModelMaps:
    """``method``'s maps of ``rec`` on ``clip`` for ``class_idx`` (None: its top-1 on the
    clip); ``probs``: the video's probabilities to report (default: the clip's own)."""
    import torch

    from dissect import compute_clip_maps

    if class_idx is not None and not 0 <= class_idx < len(rec.names):
        raise ValueError(
            f"class {class_idx} is out of range for {rec.path.name} ({len(rec.names)} classes)"
        )
    rec.model.num_segments = len(clip.indices)
    out = compute_clip_maps(rec.model, clip.input.to(_device()), method, class_idx)
    if probs is None:
        probs = torch.softmax(out.logits[0].detach().float(), 0).cpu().numpy()
    return ModelMaps(out.maps[0].detach().float().cpu().numpy(), probs, int(out.classes[0]))


def top_classes(probs: np.ndarray, names: Sequence[str], k: int = 5) -> list[tuple[str, float]]:
    """The ``k`` most probable classes as ``(name, probability)``, best first (ties: the lower
    index first): :func:`tsm_apps.evaluation.scoring.top_k`'s ranking, as table rows."""
    from tsm_apps.evaluation.scoring import top_k

    return [(str(t["name"]), t["prob"]) for t in top_k(probs, names, k)]


def maps_on_frames(clip: ClipInput, maps: np.ndarray, per: str = "clip") -> np.ndarray:
    """Maps drawn on the video's frames as they are (aspect kept): on the region the model saw,
    the rest dimmed, ``(T, H, W, 3)`` uint8 (:func:`dissect.overlay_in_frame`)."""
    from dissect import overlay_in_frame

    return overlay_in_frame(clip.context, maps, clip.box, per=per)
