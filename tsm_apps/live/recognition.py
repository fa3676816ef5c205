"""The online recognizer as a :class:`~tsm_apps.live.engine.Stepper`, and what a stream of its
frame scores is read as.

A frame goes through the checkpoint's own test protocol (:func:`tsm_apps.data.pipeline.frame_input`:
its centre view, resized and normalised as ``tsm test`` does), the batch through the backbone and
the classifier: logits ``(B, K)``. A TSM checkpoint streams with the causal (online) shift; a TSN
checkpoint streams frame by frame with nothing carried.

:class:`Window` reads a stream of frame logits the way the official online demo does
(``online_demo/main.py``: the mean of the last 12 frames' logits), so an action that ends gives
way to the next one in a long video.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np
import torch
from torch import Tensor, nn

from ..data.pipeline import frame_input
from ..models.online import online_modules
from .engine import Prepared

WINDOW = 12
"""Frames whose logits are averaged for the running answer (official ``online_demo/main.py``:
``history_logit = history_logit[-12:]``)."""


class RecognizerStepper:
    """``model`` (a :class:`~tsm_apps.models.recognizer.Recognizer` with ``shift='online'`` or
    ``None``) streamed under ``protocol``; ``names`` its classes. Rows of a batch are computed
    independently on the CPU: the pooling and the classifier run one row at a time (a
    reduction's split over threads and a matrix product's kernel both depend on the number of
    rows: a batch of 3 differed from 3 batches of 1 by 4e-15 in MobileNetV2's logits)."""

    def __init__(self, model: nn.Module, protocol: Any, names: Sequence[str]) -> None:
        self.model = model.eval()
        self.modules = online_modules(model)
        self.protocol = protocol
        self.names = list(names)
        self.device = next(model.parameters()).device
        if len(self.names) != model.config.num_classes:
            raise ValueError(
                f"{len(self.names)} class names for a model of {model.config.num_classes} classes"
            )

    @classmethod
    def from_checkpoint(
        cls, path: str | Path, device: Any = None, **options: Any
    ) -> "RecognizerStepper":
        """The checkpoint's recognizer for streaming: a TSM with the causal shift, a TSN as it is;
        its class names and test protocol (``options`` change the protocol, e.g. ``view='frame'``)."""
        from ..checkpoint.opening import open_online

        ck = open_online(
            path, device=device, what="tsm live needs a recognizer checkpoint", **options
        )
        if ck.modality != "rgb":
            raise ValueError(f"{ck.path}: a {ck.modality} checkpoint cannot stream camera frames")
        return cls(ck.model, ck.protocol, ck.names)

    @property
    def kind(self) -> str:
        shift = self.model.config.shift
        return "TSN (no shift)" if shift is None else f"TSM ({shift} shift)"

    def prepare(self, frame: np.ndarray) -> Prepared:
        x = frame_input(frame, self.protocol)
        return Prepared(x, tuple(x.shape[1:]))

    def forward(self, batch: Tensor) -> tuple:
        feats = self.model.backbone(batch)
        if batch.device.type == "cpu":  # each row as a batch of one (class docstring)
            return (torch.cat([self._head(row) for row in feats.split(1)]),)
        return (self._head(feats),)

    def _head(self, feats: Tensor) -> Tensor:
        return self.model.fc(feats.mean(dim=(2, 3)))

    def finish(self, outputs: tuple, prepared: Sequence[Prepared]) -> list:
        logits = outputs[0][: len(prepared)].float().cpu()
        return list(logits.unbind(0))


def top_k(logits: Tensor, names: Sequence[str], k: int = 5) -> list[dict]:
    """``[{"class", "index", "prob"}]`` of the ``k`` most probable classes of ``logits (K,)``,
    best first (ties: the lower index first)."""
    from ..evaluation.scoring import top_k as ranked

    probs = torch.softmax(logits.float(), 0).numpy()
    return [
        {"class": str(t["name"]), "index": int(t["index"]), "prob": float(t["prob"])}
        for t in ranked(probs, names, k)
    ]


class Window:
    """The running answer of a stream: the mean of the last ``size`` frames' logits."""

    def __init__(self, size: int = WINDOW) -> None:
        if size < 1:
            raise ValueError(f"the window needs >= 1 frame, got {size}")
        self._logits: deque = deque(maxlen=size)

    def add(self, logits: Tensor) -> Tensor:
        """The window's mean logits after ``logits (K,)`` of the newest frame."""
        self._logits.append(logits)
        return torch.stack(tuple(self._logits)).mean(0)

    def clear(self) -> None:
        self._logits.clear()

    @property
    def mean(self) -> Optional[Tensor]:
        return torch.stack(tuple(self._logits)).mean(0) if self._logits else None


class RecognitionReader:
    """A stream of frame logits read as records: ``{"top": the frame's top-k, "window": the
    top-k of the mean logits of the last ``window`` frames}`` (the
    :class:`~tsm_apps.live.output.Reader` of the recognizer)."""

    def __init__(self, names: Sequence[str], k: int = 5, window: int = WINDOW) -> None:
        self.names, self.k = list(names), k
        self.window = Window(window)

    def record(self, result: Any) -> dict:
        logits = result.output
        mean = self.window.add(logits)
        return {"top": top_k(logits, self.names, self.k), "window": top_k(mean, self.names, self.k)}

    def draw(self, image: np.ndarray, record: dict) -> np.ndarray:
        """The running top-3 written at the frame's top left, on a dark band."""
        from PIL import Image, ImageDraw

        img = Image.fromarray(np.ascontiguousarray(image))
        pen = ImageDraw.Draw(img)
        lines = [f"{t['class']} {100 * t['prob']:.0f}%" for t in record["window"][:3]]
        boxes = [pen.textbbox((0, 0), s) for s in lines]
        w = max(b[2] - b[0] for b in boxes) + 8
        h = sum(b[3] - b[1] + 4 for b in boxes) + 4
        pen.rectangle([0, 0, w, h], fill=(0, 0, 0))
        y = 2
        for s, b in zip(lines, boxes):
            pen.text((4, y), s, fill=(255, 255, 255))
            y += b[3] - b[1] + 4
        return np.asarray(img)


def live_model(
    checkpoint: str | Path, device: Any = None, k: int = 5, window: int = WINDOW, **options: Any
) -> Any:
    """The recognizer of ``checkpoint`` as a :class:`~tsm_apps.live.output.LiveModel`; an
    engine file (``.onnx``, written by ``tsm export --online``) is stepped by ONNX Runtime on
    the CPU (:mod:`tsm_apps.live.engine_file`; ``device`` and ``options`` do not apply)."""
    from ..evaluation.recognition import ENGINE_SUFFIXES
    from .output import LiveModel

    if Path(checkpoint).suffix.lower() in ENGINE_SUFFIXES:
        from .engine_file import EngineStepper

        if options:
            raise ValueError(
                f"{checkpoint}: an engine streams under its stored protocol, not {options}"
            )
        stepper = EngineStepper.from_file(checkpoint)  # the same records as its checkpoint's
    else:
        stepper = RecognizerStepper.from_checkpoint(checkpoint, device, **options)
    return LiveModel("recognizer", stepper, lambda: RecognitionReader(stepper.names, k, window))
