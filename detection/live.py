"""The online detector as a :class:`tsm_apps.live.engine.Stepper`: many streams of one
:class:`~detection.detector.ClipRFCN` stepped in one batch, each with its own shift state.

A frame goes through the config's test pipeline (resize, normalise, pad to the divisor: the
frame alone, so its input does not depend on the other streams'); the batch through the
backbone's streaming step (replayed from a CUDA graph on a GPU); each row through the RPN and the
R-FCN head. Boxes come back in the frame's own pixels (:class:`~detection.records.FrameDetections`).
``tsm detect video``, ``tsm live --detector`` and the app all stream through it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence

import numpy as np
import torch
from torch import Tensor

from tsm_apps.data.decoder import check_rgb_frames
from tsm_apps.live.engine import BatchedEngine, Prepared
from tsm_apps.viz import draw_boxes

from .inference import BOX_COLOR, DEFAULT_SCORE_THR, Detector, frame_result
from .records import FrameDetections


class DetectorStepper:
    """``detector`` (a loaded :class:`~detection.inference.Detector`) streamed frame by frame;
    boxes scoring below ``score_thr`` are dropped."""

    def __init__(self, detector: Detector, score_thr: float = DEFAULT_SCORE_THR) -> None:
        self.detector = detector
        self.model = detector.model.eval()
        self.modules = self.model.backbone.shift_modules
        self.device = detector.device
        self.names = list(detector.classes)
        self.score_thr = score_thr
        self._count = 0

    @property
    def kind(self) -> str:
        shift = getattr(self.model.backbone.cfg, "shift", None)
        return "TSN (no shift)" if shift is None else f"TSM ({shift} shift)"

    def prepare(self, frame: np.ndarray) -> Prepared:
        from mmengine.dataset import pseudo_collate

        frame = np.asarray(frame)
        if frame.dtype != np.uint8 or frame.ndim != 3 or frame.shape[-1] != 3:
            raise ValueError(
                f"expected a uint8 (H, W, 3) RGB frame, got {frame.dtype} {frame.shape}"
            )
        bgr = np.ascontiguousarray(frame[..., ::-1])  # mmdet configs expect BGR (bgr_to_rgb)
        self._count += 1
        data = self.detector.pipeline(dict(img=bgr, img_id=self._count, video="live", frame_id=0))
        with torch.no_grad():
            batch = self.model.data_preprocessor(pseudo_collate([data]), False)
        x = batch["inputs"]
        return Prepared(x, tuple(x.shape[1:]), batch["data_samples"][0])

    def forward(self, batch: Tensor) -> tuple:
        x = self.model.backbone.stages(batch)  # the engine binds the streams' state
        return tuple(self.model.neck(x)) if self.model.with_neck else x

    def finish(self, outputs: tuple, prepared: Sequence[Prepared]) -> list:
        x = tuple(o[: len(prepared)] for o in outputs)
        samples = self.model.heads_predict(x, [p.meta for p in prepared], rescale=True)
        return [frame_result(0, s, self.names, self.score_thr) for s in samples]


class DetectionReader:
    """A stream of detections read as records (``{"boxes": [{"class", "score", "box"}]}``,
    boxes ``x0, y0, x1, y1`` in the frame's pixels) and drawn as outlined, captioned boxes."""

    def record(self, result: Any) -> dict:
        d = result.output
        return {
            "boxes": [
                {"class": name, "score": round(float(s), 4), "box": [round(float(v), 2) for v in b]}
                for name, s, b in zip(d.labels, d.scores.tolist(), d.boxes.tolist())
            ]
        }

    def draw(self, image: np.ndarray, record: dict) -> np.ndarray:
        boxes = np.array([b["box"] for b in record["boxes"]], np.float32).reshape(-1, 4)
        captions = [f"{b['class']} {b['score']:.2f}" for b in record["boxes"]]
        return draw_boxes(image, boxes, captions, color=BOX_COLOR, width=None)


def live_model(run: str, checkpoint: Optional[str], device: Any, cfg: Any) -> Any:
    """The ``tsm.live`` entry point: the detector of a training folder (or a config and
    ``checkpoint``) as a :class:`tsm_apps.live.output.LiveModel` (``cfg.score_thr``)."""
    from tsm_apps.live.output import LiveModel

    from .inference import load_detector

    detector = load_detector(Path(run), checkpoint=checkpoint, device=device)
    stepper = DetectorStepper(detector, getattr(cfg, "score_thr", DEFAULT_SCORE_THR))
    return LiveModel("detector", stepper, DetectionReader)


def stream_frames(
    detector: Detector, frames: Iterable[np.ndarray], score_thr: float = DEFAULT_SCORE_THR
) -> Iterator[FrameDetections]:
    """Detections of each uint8 ``(H, W, 3)`` RGB frame of ``frames`` (any iterable: a decoder
    can feed it chunk by chunk), one stream from empty state: the live engine
    (:class:`~detection.live.DetectorStepper`) with a single stream."""
    stepper = DetectorStepper(detector, score_thr)
    engine = BatchedEngine(stepper)
    state = engine.new_state()
    for i, frame in enumerate(frames):
        try:
            prepared = stepper.prepare(frame)
        except ValueError as e:
            raise ValueError(f"frame {i}: {e}") from None
        yield replace(engine.step([state], [prepared])[0], frame=i)


def detect_video(
    detector: Detector,
    frames: np.ndarray,
    progress: Optional[Callable[[float], object]] = None,
    score_thr: float = DEFAULT_SCORE_THR,
) -> list[FrameDetections]:
    """Online detection over uint8 RGB ``frames (T, H, W, 3)`` in order: one
    :class:`FrameDetections` per frame (boxes in the frames' pixels, scores >= ``score_thr``).
    ``progress(fraction)`` is called after each frame."""
    frames = check_rgb_frames(frames)
    out = []
    for r in stream_frames(detector, frames, score_thr):
        out.append(r)
        if progress is not None:
            progress((r.frame + 1) / len(frames))
    return out
