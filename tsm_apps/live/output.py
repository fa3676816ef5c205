"""What a live model's answers become: one JSON line per frame, a rendered video, a timeline.

A :class:`LiveModel` pairs a model's :class:`~tsm_apps.live.engine.Stepper` with a
:class:`Reader` per stream, which turns each :class:`~tsm_apps.live.stream.Result` into the
model's fields of a record (a recognizer's top-k, a detector's boxes) and draws them on the frame.
:class:`JsonLines` writes records as they come (each line flushed: a stopped run keeps every
line written), :class:`Renderer` encodes drawn frames one at a time (constant memory; the file
appears when the stream ends), :class:`Timeline` keeps the running top-k of every frame compactly
and draws it over the whole video with Plotly; :class:`StreamOutputs` is all of them for one
stream.
"""

from __future__ import annotations

import json
import sys
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional, Protocol, Sequence, TextIO

import numpy as np

from ..data.video_writer import VideoWriter
from ..io import atomic_write_text
from .engine import Stepper
from .stream import Result


class Reader(Protocol):
    """One stream's reading of a model's answers."""

    def record(self, result: Result) -> dict:
        """The model's fields of the frame's record (JSON-ready)."""

    def draw(self, image: np.ndarray, record: dict) -> np.ndarray:
        """A copy of ``image`` uint8 ``(H, W, 3)`` with the record drawn on it."""


@dataclass
class LiveModel:
    """A model ``tsm live`` and the app stream through: ``name`` (``"recognizer"``,
    ``"detector"``), its stepper and a new :class:`Reader` per stream."""

    name: str
    stepper: Stepper
    reader: Callable[[], Reader]


def frame_record(result: Result, model: str) -> dict:
    """The fields every record has: stream, model, frame index, source timestamp, the batched
    step's milliseconds and size, capture-to-answer latency, frames dropped so far."""
    f = result.frame
    return {
        "stream": result.stream,
        "model": model,
        "frame": f.index,
        "pts": None if f.pts is None else round(f.pts, 6),
        "model_ms": round(result.model_ms, 3),
        "batch": result.batch,
        "latency_ms": round(result.latency_ms, 3),
        "dropped": result.dropped,
    }


class JsonLines:
    """Records as JSON lines to a new file ``path`` (``None`` or ``-``: stdout)."""

    def __init__(self, path: Optional[str | Path] = None) -> None:
        self.path = None if path in (None, "-") else Path(path)
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._out: TextIO = sys.stdout if self.path is None else open(self.path, "w")
        self.count = 0

    def write(self, record: dict) -> None:
        self._out.write(json.dumps(record) + "\n")
        self._out.flush()
        self.count += 1

    def close(self) -> None:
        if self.path is not None:
            self._out.close()


class Renderer:
    """Drawn frames of one stream into ``path`` (see :class:`~tsm_apps.data.video_writer.VideoWriter`):
    the first frame fixes the video's size (odd sizes cropped by one pixel); a frame of another
    size (the source changed resolution) is resized to it."""

    def __init__(self, path: Path, fps: float) -> None:
        self.writer = VideoWriter(path, fps)
        self.size: Optional[tuple] = None  # (H, W) of the video

    def write(self, image: np.ndarray) -> None:
        h, w = image.shape[:2]
        if self.size is None:
            self.size = (h - h % 2, w - w % 2)
        if (h, w) != self.size and (h - h % 2, w - w % 2) != self.size:
            from PIL import Image

            img = Image.fromarray(np.ascontiguousarray(image))
            image = np.asarray(img.resize(self.size[::-1], Image.Resampling.BILINEAR))
        self.writer.write(image[: self.size[0], : self.size[1]])

    def close(self, ok: bool = True) -> Optional[Path]:
        """The file, in place (None when nothing was written or ``ok`` is False)."""
        if not ok or self.writer.count == 0:
            self.writer.abort()
            return None
        return self.writer.close()


class Timeline:
    """Per-frame running top-k of one stream, kept as flat arrays (a few bytes a class a frame),
    drawn as one line per class that was ever the running top-1."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)
        self.frames, self.times = array("q"), array("d")
        self.index, self.prob = array("i"), array("f")
        self.k = 0

    def add(self, frame: int, pts: Optional[float], top: Sequence[dict]) -> None:
        self.k = self.k or len(top)
        self.frames.append(frame)
        self.times.append(float("nan") if pts is None else pts)
        for t in list(top)[: self.k] + [{"index": -1, "prob": 0.0}] * (self.k - len(top)):
            self.index.append(int(t["index"]))
            self.prob.append(float(t["prob"]))

    def figure(self, title: str) -> Any:
        import plotly.graph_objects as go

        idx = np.asarray(self.index).reshape(-1, self.k)
        prob = np.asarray(self.prob).reshape(-1, self.k)
        x = np.asarray(self.times)
        use_time = len(x) and not np.isnan(x).any()
        x = x if use_time else np.asarray(self.frames)
        fig = go.Figure()
        for c in sorted(set(idx[:, 0].tolist()) - {-1}):
            y = np.where(idx == c, prob, 0.0).max(1)
            fig.add_scatter(x=x, y=y, mode="lines", name=self.names[c])
        fig.update_layout(
            title=title,
            xaxis_title="time (s)" if use_time else "frame",
            yaxis_title="probability (running window)",
            yaxis_range=[0, 1],
        )
        return fig

    def write(self, path: Path, title: str) -> Path:
        html = self.figure(title).to_html(include_plotlyjs=True, full_html=True)
        return atomic_write_text(path, html)


class StreamOutputs:
    """What one stream's answers become: its model's records (written to ``lines``, shared by
    all streams), and when asked the rendered ``video`` (opened at the first answer, when a
    URL's frame rate, ``fps()``, is known; 25 if none) and the ``timeline`` (a recognizer's).
    ``wants_pixels``: whether the answers must keep their frame's pixels."""

    def __init__(
        self,
        model: LiveModel,
        fps: Callable[[], Optional[float]],
        video: Optional[Path] = None,
        timeline: Optional[Path] = None,
    ) -> None:
        self.model, self.reader, self.fps = model, model.reader(), fps
        self.video, self.renderer = video, None
        self.timeline_path = timeline
        self.timeline = Timeline(model.stepper.names) if timeline is not None else None

    @property
    def wants_pixels(self) -> bool:
        return self.video is not None

    def write(self, result: Result, lines: JsonLines) -> dict:
        """The frame's record, written as a line, drawn and added to the timeline."""
        record = {**frame_record(result, self.model.name), **self.reader.record(result)}
        lines.write(record)
        if self.video is not None:
            if self.renderer is None:
                self.renderer = Renderer(self.video, self.fps() or 25.0)
            self.renderer.write(self.reader.draw(result.frame.image, record))
        if self.timeline is not None and "window" in record:
            self.timeline.add(record["frame"], record["pts"], record["window"])
        return record

    def close(self, title: str) -> None:
        """Finish the video and write the timeline (those with at least one frame)."""
        if self.renderer is not None:
            self.renderer.close()
            self.renderer = None
        if self.timeline is not None and len(self.timeline.frames):
            self.timeline.write(self.timeline_path, title)
