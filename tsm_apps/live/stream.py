"""A live stream: one source's frames through one model, with its own state and figures.

A :class:`LiveStream` holds the stream's :class:`~tsm_apps.models.shift.state.ShiftState`, a
one-frame mailbox and its counters. A source puts frames in with :meth:`LiveStream.submit`:
a live source never waits (a newer frame replaces one the model has not taken yet, and counts
as dropped: memory stays flat and the answer stays current), a file may wait for the model
(``block=True``: every frame is stepped). The :class:`~tsm_apps.live.scheduler.Scheduler` takes
the newest frame of every stream at each tick and hands back a :class:`Result` per frame.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from ..models.shift import ShiftState

LATENCY_WINDOW = 200  # results over which the latency percentiles are taken


@dataclass
class Frame:
    """A source's frame: ``image`` uint8 ``(H, W, 3)`` RGB; ``index`` its 0-based position in
    the source (frames dropped before the model count too); ``pts`` the source's timestamp in
    seconds (None when the source gives none); ``captured`` ``time.monotonic()`` when read."""

    image: np.ndarray
    index: int
    pts: Optional[float]
    captured: float


@dataclass
class Result:
    """The model's answer on one frame of a stream: ``output`` (the stepper's: logits ``(K,)``
    of a recognizer, detections of a detector), the ``frame``, the batched step's ``model_ms``
    and ``batch`` (streams stepped together), ``done`` (``time.monotonic()``) and the stream's
    ``dropped`` count then."""

    stream: str
    frame: Frame
    output: Any
    model_ms: float
    batch: int
    done: float
    dropped: int

    @property
    def latency_ms(self) -> float:
        """From the frame's capture to its answer, in milliseconds."""
        return 1000.0 * (self.done - self.frame.captured)


class LiveStream:
    """One stream of one model (module docstring). ``on_result(result)`` is called on the
    stepping thread for every frame answered; ``on_error(message)`` once if the stream fails
    (a one-line message naming the stream). ``latest`` is the newest result."""

    def __init__(
        self,
        name: str,
        state: ShiftState,
        wake: threading.Condition,
        on_result: Optional[Callable[[Result], None]] = None,
        on_error: Optional[Callable[[str], None]] = None,
    ) -> None:
        self.name = name
        self.state = state
        self.on_result, self.on_error = on_result, on_error
        self._wake = wake  # the scheduler's: notified when a frame arrives
        self._pending: Optional[Frame] = None
        self._reset = False
        self.size: Optional[tuple] = None  # (H, W) of the frames stepped so far
        self.received = self.dropped = self.stepped = 0
        self.latest: Optional[Result] = None
        self.last_frame = now()  # when the source last offered a frame (or the stream opened)
        self.error: Optional[str] = None
        self.ended = self.closed = False
        self._latency: deque = deque(maxlen=LATENCY_WINDOW)

    # -- the source's side -------------------------------------------------------------------
    def submit(self, frame: Frame, block: bool = False, timeout: Optional[float] = None) -> bool:
        """Offer ``frame``; ``block``: wait (up to ``timeout`` s) while the previous frame is
        still waiting for the model, else replace it (counted in ``dropped``). False once the
        stream is closed or failed."""
        with self._wake:
            if block:
                self._wake.wait_for(lambda: self._pending is None or not self.open, timeout)
            if not self.open:
                return False
            if self._pending is not None:
                self.dropped += 1
            self._pending = frame
            self.received += 1
            self.last_frame = now()
            self._wake.notify_all()
        return True

    def end(self, error: Optional[str] = None) -> None:
        """The source has no more frames (``error``: why it stopped, one line)."""
        with self._wake:
            self.ended = True
            if error is not None and self.error is None:
                self.error = error
            self._wake.notify_all()
        if error is not None and self.on_error is not None:
            self.on_error(error)

    def reset(self) -> None:
        """Start afresh at the next frame (a cut, a new clip): the state is zeroed before it."""
        with self._wake:
            self._reset = True

    def close(self) -> None:
        """Leave: the scheduler forgets the stream at its next tick (state and frame freed)."""
        with self._wake:
            self.closed = True
            self._pending = None
            self._wake.notify_all()

    @property
    def open(self) -> bool:
        return not (self.closed or self.error is not None)

    @property
    def done(self) -> bool:
        """Ended (or closed or failed) with no frame left to step."""
        return (self.ended or not self.open) and self._pending is None

    def wait_done(self, timeout: Optional[float] = None) -> bool:
        with self._wake:
            return self._wake.wait_for(lambda: self.done, timeout)

    # -- the scheduler's side ----------------------------------------------------------------
    def take(self) -> Optional[Frame]:
        """The waiting frame (None if none); applies a pending reset. Call under the lock."""
        frame, self._pending = self._pending, None
        if frame is not None and self._reset:
            self.state.reset()
            self._reset = False
        return frame

    def deliver(self, result: Result) -> None:
        self.stepped += 1
        self.latest = result
        self._latency.append(result.latency_ms)
        if self.on_result is not None:
            self.on_result(result)

    def fail(self, message: str) -> None:
        """Stop the stream with a one-line ``message`` (the others go on)."""
        with self._wake:
            if self.error is None:
                self.error = message
            self._pending = None
            self._wake.notify_all()
        if self.on_error is not None:
            self.on_error(message)

    # -- figures -----------------------------------------------------------------------------
    def latency(self) -> dict:
        """``{"p50", "p95"}`` capture-to-answer milliseconds over the last results (None
        before the first)."""
        xs = sorted(self._latency)
        if not xs:
            return {"p50": None, "p95": None}
        return {"p50": statistics.median(xs), "p95": xs[min(len(xs) - 1, int(0.95 * len(xs)))]}

    def figures(self) -> dict:
        return {
            "stream": self.name,
            "received": self.received,
            "stepped": self.stepped,
            "dropped": self.dropped,
            **{f"latency_{k}_ms": v for k, v in self.latency().items()},
            "cache_bytes": self.state.nbytes,
            "error": self.error,
        }


def now() -> float:
    """The clock of ``Frame.captured`` and ``Result.done``."""
    return time.monotonic()
