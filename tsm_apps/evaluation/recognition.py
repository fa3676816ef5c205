"""The Python API of testing: a checkpoint with its class names and test protocol, and the
prediction it makes on a video -- what ``tsm test``, dissection and the app all call.

    from tsm_apps.evaluation import open_checkpoint, predict
    ck = open_checkpoint("TSM_kinetics_RGB_resnet50_shift8_blockres_avg_segment8_e50.pth")
    pred = predict(ck, "clip.mp4")          # pred.indices (clips, T), pred.top5, pred.probs (K,)

The protocol, class names and test segments are the checkpoint's own
(:mod:`tsm_apps.checkpoint.identity`); options
(``clips``, ``crops``, ``scale_size``, ``view='frame'``...) change it explicitly.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, List, Optional

import numpy as np
import torch
from torch import Tensor, nn

from ..data.pipeline import ClipViews, load_views
from ..data.protocol import TestProtocol
from .scoring import fuse_views, top_k, view_logits

__all__ = ["Checkpoint", "Prediction", "open_checkpoint", "predict"]


@dataclass
class Checkpoint:
    """A recognizer ready to test: the model (eval mode, on its device), its class ``names``,
    its test ``protocol``, the file, its key ``layout`` and input modality."""
    model: nn.Module
    names: List[str]
    protocol: TestProtocol
    path: Path
    layout: str
    modality: str = "rgb"
    new_length: int = 1
    raw: dict = field(default_factory=dict, repr=False)

    @property
    def num_segments(self) -> int:
        return int(self.model.config.num_segments)


@dataclass
class Prediction:
    """One video's answer: frames used ``indices (clips, T)``, ``logits (V, K)`` of the views,
    fused ``probs (K,)`` float64, ``top5`` (index, name, prob) and the ``views`` themselves."""
    indices: np.ndarray
    logits: Tensor
    probs: Tensor
    top5: list
    views: ClipViews


def open_checkpoint(path: str | Path, classes: Optional[str] = None,
                    protocol: Optional[TestProtocol] = None, device: Any = None,
                    segments: Optional[int] = None, model_overrides: Optional[dict] = None,
                    what: str = "testing needs a recognizer checkpoint",
                    **options: Any) -> Checkpoint:
    """Read ``path`` once, safely, and build its recognizer (``segments`` overrides ``T``, by
    default the checkpoint's test segments; ``model_overrides`` other config fields, e.g.
    ``{"shift": "online"}``) on ``device`` (default: :func:`tsm_apps.distributed.auto_device`),
    its class names (``classes``: a class file) and its test protocol (``protocol`` replaces it;
    ``options`` such as ``clips=10`` change it). ``what``: why a file without a classifier is
    refused (the error names the file)."""
    from ..checkpoint.identity import class_names, official_test_segments, protocol_for
    from ..checkpoint.reading import build_from_checkpoint, inspect_checkpoint
    from ..distributed import auto_device
    path = Path(path)
    ckpt, layout, fields = inspect_checkpoint(path, what)
    t = segments or official_test_segments(path.name)
    overrides = dict(model_overrides or {}, **({"num_segments": t} if t else {}))
    model = build_from_checkpoint(ckpt, path, **overrides)
    dev = torch.device(device) if device is not None else auto_device()
    names = class_names(int(fields["num_classes"]), ckpt, classes, file_name=path.name)
    proto = (protocol or protocol_for(layout, ckpt, path.name)).with_options(**options)
    channels = int(fields.get("in_channels", 3))
    modality, length = ("rgb", 1) if channels == 3 else ("flow", channels // 2)
    return Checkpoint(model.to(dev).eval(), list(names), proto, path, layout, modality, length,
                      ckpt)


def predict(ck: Checkpoint, video: Any, frames: Optional[np.ndarray] = None) -> Prediction:
    """``ck``'s prediction on ``video`` (a path, or a source with ``path``/``num_frames``;
    ``frames`` uint8 ``(F, H, W, 3)`` already decoded may be given instead)."""
    from ..data.record import VideoSource
    source = VideoSource.of(video) if isinstance(video, (str, Path)) and frames is None else video
    views = load_views(source, ck.protocol, ck.num_segments, ck.modality, ck.new_length, frames)
    logits = view_logits(ck.model, views.input)
    probs = fuse_views(logits, ck.protocol.fusion)
    return Prediction(views.indices, logits, probs, top_k(probs, ck.names), views)
