"""The Python API of testing: a checkpoint with its class names and test protocol, and the
prediction it makes on a video -- what ``tsm test``, dissection and the app all call.

    from tsm_apps.evaluation import open_checkpoint, predict
    ck = open_checkpoint("TSM_kinetics_RGB_resnet50_shift8_blockres_avg_segment8_e50.pth")
    pred = predict(ck, "clip.mp4")          # pred.indices (clips, T), pred.top5, pred.probs (K,)

:func:`open_checkpoint` (:mod:`tsm_apps.checkpoint.opening`, the one way into a checkpoint file)
gives the checkpoint's own protocol, class names and test segments
(:mod:`tsm_apps.checkpoint.identity`); options
(``clips``, ``crops``, ``scale_size``, ``view='frame'``...) change it explicitly.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np
from torch import Tensor

from ..checkpoint.opening import Checkpoint, open_checkpoint
from ..data.pipeline import ClipViews, load_views
from .scoring import fuse_views, top_k, view_logits

__all__ = ["Checkpoint", "Prediction", "open_checkpoint", "open_model", "predict"]

ENGINE_SUFFIXES = (".onnx",)


def open_model(path: str | Path, classes: Optional[str] = None, **kw: Any) -> Checkpoint:
    """A checkpoint (:func:`open_checkpoint`) or an engine file written by ``tsm export``
    (``.onnx``: :func:`tsm_apps.engine.runtime.open_engine`, run under its stored protocol;
    ``device`` is then ONNX Runtime's CPU)."""
    if Path(path).suffix.lower() in ENGINE_SUFFIXES:
        from ..engine.runtime import open_engine

        kw.pop("device", None)
        return open_engine(path, classes, **kw)
    return open_checkpoint(path, classes, **kw)


@dataclass
class Prediction:
    """One video's answer: frames used ``indices (clips, T)``, ``logits (V, K)`` of the views,
    fused ``probs (K,)`` float64, ``top5`` (index, name, prob) and the ``views`` themselves."""

    indices: np.ndarray
    logits: Tensor
    probs: Tensor
    top5: list
    views: ClipViews


def predict(ck: Checkpoint, video: Any, frames: Optional[np.ndarray] = None) -> Prediction:
    """``ck``'s prediction on ``video`` (a path, or a source with ``path``/``num_frames``;
    ``frames`` uint8 ``(F, H, W, 3)`` already decoded may be given instead)."""
    from ..data.record import VideoSource

    source = VideoSource.of(video) if isinstance(video, (str, Path)) and frames is None else video
    views = load_views(source, ck.protocol, ck.num_segments, ck.modality, ck.new_length, frames)
    logits = view_logits(ck.model, views.input)
    probs = fuse_views(logits, ck.protocol.fusion)
    return Prediction(views.indices, logits, probs, top_k(probs, ck.names), views)
