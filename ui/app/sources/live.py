"""Live video in the app: every viewer's frames through the server's one model per checkpoint.

* :class:`Hub`: one loaded model and its :class:`tsm_apps.live.scheduler.Scheduler`, shared by
  every session (the view keeps it with ``st.cache_resource``): the streams of all viewers of a
  model step in one batch per tick, each with its own shift state.
* :class:`Feed`: one viewer's source through two models side by side (TSN and TSM). Each frame
  offered goes to a stream of each model (the newest frame waits; older ones are dropped and
  counted); the frame handed back shows, side by side, each model's newest answer drawn on the
  frame it answered (so the video shows exactly the frames the models saw, a step behind).
  The feed measures what the viewer gets: answers computed and answers shown, and the time from
  a frame's arrival on the server to its answer being drawn on a frame sent back (p50/p95).
* :class:`Recorder`: every frame the models answered and the answers, kept on disk
  (``tsm ui --record-live DIR``): a live session can be re-run offline, frame for frame.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Optional

import numpy as np

__all__ = [
    "Hub",
    "Feed",
    "Recorder",
    "recognizer_hub",
    "detector_hub",
]

SHOWN_WINDOW = 200  # answers over which the capture-to-shown percentiles are taken
IDLE_CLOSE_S = 10.0  # a viewer whose frames stop (page closed) is forgotten after this long
REST_AFTER_S = 60.0  # a model nobody streams through holds no thread after this long


@dataclass
class Hub:
    """A model every viewer shares: ``name`` (TSN / TSM), the live model (stepper + readers),
    its scheduler (started) and a description (``kind``)."""

    name: str
    model: Any
    scheduler: Any
    kind: str

    def close(self) -> None:
        self.scheduler.close()


def _hub(name: str, model: Any) -> Hub:
    from tsm_apps.live.engine import BatchedEngine
    from tsm_apps.live.scheduler import Scheduler

    sched = Scheduler(
        BatchedEngine(model.stepper), f"ui-{name}", idle_close=IDLE_CLOSE_S, rest_after=REST_AFTER_S
    )
    return Hub(name, model, sched.start(), model.stepper.kind)


def recognizer_hub(name: str, path: Path) -> Hub:
    """The recognizer of checkpoint ``path`` streamed online (a TSM with the causal shift, a TSN
    frame by frame), under its own test protocol; ValueError naming the file if unusable."""
    from tsm_apps.distributed import auto_device
    from tsm_apps.live.recognition import live_model

    try:
        return _hub(name, live_model(path, auto_device()))
    except (ValueError, KeyError, TypeError, RuntimeError, OSError) as e:
        raise ValueError(f"cannot stream {Path(path).name}: {e}") from None


def detector_hub(name: str, folder: Path, score_thr: float) -> Hub:
    """The detector of a training folder streamed online; boxes scoring at least ``score_thr``."""
    from detection.inference import find_run_files
    from detection.live import live_model
    from tsm_apps.distributed import auto_device

    from .config_data import checked_copy

    config, checkpoint = find_run_files(folder)
    with tempfile.TemporaryDirectory(prefix="tsm_ui_config_") as tmp:
        cfg = SimpleNamespace(score_thr=score_thr)
        model = live_model(
            str(checked_copy(config, Path(tmp))), str(checkpoint), auto_device(), cfg
        )
    return _hub(name, model)


class Recorder:
    """Frames answered and their answers under ``folder/<feed>/<model>/``: ``%06d.png`` (the
    frame the model stepped, lossless) and ``answers.jsonl`` (one record a frame, in order)."""

    def __init__(self, folder: Path, feed: str) -> None:
        self.folder = Path(folder) / feed
        self._lock = threading.Lock()

    def write(self, model: str, result: Any, record: dict) -> None:
        from PIL import Image

        where = self.folder / model
        where.mkdir(parents=True, exist_ok=True)
        Image.fromarray(result.frame.image).save(where / f"{result.frame.index:06d}.png")
        line = json.dumps({"frame": result.frame.index, **record})
        with self._lock, open(where / "answers.jsonl", "a") as f:
            f.write(line + "\n")


def _titled(panel: np.ndarray, title: str, color: tuple) -> np.ndarray:
    """``panel`` under a coloured title bar (uint8 ``(H + 16, W, 3)``)."""
    from PIL import Image, ImageDraw

    bar = Image.new("RGB", (panel.shape[1], 16), color)
    ImageDraw.Draw(bar).text((4, 2), title, fill=(255, 255, 255))
    return np.concatenate([np.asarray(bar), panel], axis=0)


class Feed:
    """One viewer's frames through ``hubs`` (``{name: Hub}``, side by side in that order); see
    the module docstring. ``offer(image)`` is called on the WebRTC thread for every frame that
    arrives (uint8 ``(H, W, 3)`` RGB) and returns the frame to send back: the models' panels
    side by side, uint8 ``(H + 16, n * W, 3)``."""

    def __init__(self, hubs: dict, label: str, recorder: Optional[Recorder] = None) -> None:
        self.hubs, self.label, self.recorder = hubs, label, recorder
        self._lock = threading.Lock()
        self.readers = {n: h.model.reader() for n, h in hubs.items()}
        self.latest: dict = {}  # name -> (result, record): the newest answer
        self.errors: dict = {}
        self.streams = {
            n: h.scheduler.open(
                f"{label} [{n}]",
                on_result=lambda r, n=n: self._answered(n, r),
                on_error=lambda msg, n=n: self.errors.setdefault(n, msg),
            )
            for n, h in hubs.items()
        }
        self.offered = 0
        self._drawn = {n: -1 for n in hubs}
        self._panels: dict = {}  # name -> the newest answer drawn on its frame
        self.shown = {n: 0 for n in hubs}
        self._delays = {n: deque(maxlen=SHOWN_WINDOW) for n in hubs}
        self.started = time.monotonic()

    def _answered(self, name: str, result: Any) -> None:
        """On the model's thread: read the answer (the reader keeps the stream's window)."""
        record = self.readers[name].record(result)
        with self._lock:
            self.latest[name] = (result, record)
        if self.recorder is not None:
            self.recorder.write(name, result, record)

    def offer(self, image: np.ndarray, pts: Optional[float] = None) -> np.ndarray:
        from tsm_apps.live.stream import Frame, now

        frame = Frame(np.ascontiguousarray(image), self.offered, pts, now())
        self.offered += 1
        for s in self.streams.values():
            s.submit(frame)
        return self.compose(frame.image)

    def compose(self, image: np.ndarray) -> np.ndarray:
        """One panel per model: the frame the model answered last with its answer drawn on it
        (drawn once, when first shown), or ``image`` before its first answer (or while its
        answered frame has another size than ``image``: the source changed size)."""
        from ui.models import rgb

        t = time.monotonic()
        panels = []
        for name, hub in self.hubs.items():
            title = f"{name}: {hub.kind}"
            with self._lock:
                got = self.latest.get(name)
            if got is not None and got[0].frame.index != self._drawn[name]:
                result, record = got  # this answer's first showing
                self._drawn[name] = result.frame.index
                self.shown[name] += 1
                self._delays[name].append(1000.0 * (t - result.frame.captured))
                drawn = self.readers[name].draw(result.frame.image, record)
                self._panels[name] = _titled(drawn, title, rgb(name))
            panel = self._panels.get(name)
            if panel is None or panel.shape[:2] != (image.shape[0] + 16, image.shape[1]):
                panel = _titled(image, title, rgb(name))
            panels.append(panel)
        return np.concatenate(panels, axis=1)

    def answers(self) -> dict:
        """``{name: (frame index, record)}`` of the newest answers."""
        with self._lock:
            return {n: (r.frame.index, rec) for n, (r, rec) in self.latest.items()}

    def figures(self) -> dict:
        """Per model: answers computed and shown (count, per second), frames dropped, the
        capture-to-answer and capture-to-shown latency (p50/p95 ms), the batch of its last
        step, the shift cache; and the frames offered."""
        out = {"offered": self.offered, "seconds": time.monotonic() - self.started}
        for name, s in self.streams.items():
            shown = sorted(self._delays[name])
            engine = self.hubs[name].scheduler.engine
            out[name] = {
                "received": s.received,
                "answered": s.stepped,
                "shown": self.shown[name],
                "dropped": s.dropped,
                "answered_ms": s.latency(),
                "shown_ms": _percentiles(shown),
                "batch": engine.stats.batch,
                "step_ms": engine.stats.median_ms,
                "cache_bytes": s.state.nbytes if self.hubs[name].model.stepper.modules else None,
                "error": self.errors.get(name),
            }
        return out

    def close(self) -> None:
        """Leave every model's scheduler (state and frames freed at its next tick)."""
        for s in self.streams.values():
            s.close()


def _percentiles(xs: list) -> dict:
    if not xs:
        return {"p50": None, "p95": None}
    return {"p50": statistics.median(xs), "p95": xs[min(len(xs) - 1, int(0.95 * len(xs)))]}
