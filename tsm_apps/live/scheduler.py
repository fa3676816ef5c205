"""Many streams, one model: every live stream of a model stepped in one batched step per tick.

A :class:`Scheduler` owns a :class:`~tsm_apps.live.engine.BatchedEngine` and its streams. At
each tick it takes the newest frame of every stream that has one, prepares them, groups them by
input size and steps each group once (Triton Inference Server's sequence batcher does the same
for stateful models: each sequence's state kept between requests, many sequences in one batch).
Streams join and leave at any tick; a stream that resets (or whose frames change size: a
cut-over) starts from zeros alone, the others keep their state. A stream whose frame cannot be
used fails with one line naming it; the others go on. So does every stream of a step that
raises anything else (a fault of the model or of a plug-in stepper): its streams fail with one
line, the traceback goes to the log, and the thread goes on serving the other streams -- it
never dies with a stream still waiting for an answer.

The scheduler runs on its own thread (:meth:`Scheduler.start`), or tick by tick from the
caller (:meth:`Scheduler.tick`, which tests use to fix the order of joins and frames).
"""

from __future__ import annotations

import logging
import threading
from typing import Callable, Optional

from .engine import BatchedEngine
from .stream import LiveStream, Result, now

log = logging.getLogger(__name__)
EXPECTED = (ValueError, TypeError, RuntimeError)
"""What a bad frame or a failing model raises; anything else is a fault, logged with its trace."""


def _line(e: Exception) -> str:
    """``e`` as one line (its type named when it is not one of :data:`EXPECTED`)."""
    text = " ".join(str(e).split()) or type(e).__name__
    return text if isinstance(e, EXPECTED) else f"{type(e).__name__}: {text}"


def _log_unexpected(e: Exception, where: str) -> None:
    if not isinstance(e, EXPECTED):
        log.error("live step of %s raised %s", where, type(e).__name__, exc_info=e)


class Scheduler:
    """The streams of one model and the thread that steps them (module docstring)."""

    def __init__(
        self,
        engine: BatchedEngine,
        name: str = "live",
        idle_close: Optional[float] = None,
        rest_after: Optional[float] = None,
    ) -> None:
        self.engine = engine
        self.name = name
        self.idle_close = idle_close  # s without a frame before a stream is closed (None: never)
        # s without any stream before the thread ends (None: never); the next open() restarts
        # it, so a scheduler nobody uses any more holds no thread (and can be collected)
        self.rest_after = rest_after
        self._resting = False
        self._wake = threading.Condition()
        self._streams: list[LiveStream] = []
        self._thread: Optional[threading.Thread] = None
        self._stop = False

    def open(
        self,
        name: str,
        on_result: Optional[Callable[[Result], None]] = None,
        on_error: Optional[Callable[[str], None]] = None,
    ) -> LiveStream:
        """A new stream of this model, from empty state, stepped from the next tick on."""
        stream = LiveStream(name, self.engine.new_state(), self._wake, on_result, on_error)
        with self._wake:
            self._streams.append(stream)
            if self._resting:
                self._launch()
        return stream

    @property
    def streams(self) -> list:
        with self._wake:
            return [s for s in self._streams if not s.closed]

    def _take(self) -> list:
        """``[(stream, frame)]`` of every stream with a frame waiting; closed and failed streams
        are forgotten here, and streams idle for ``idle_close`` seconds (a viewer who left)."""
        if self.idle_close is not None:
            t = now()
            for s in self.streams:
                if t - s.last_frame > self.idle_close:
                    s.fail(f"{s.name}: no frame for {self.idle_close:g} s: closed")
        with self._wake:
            self._streams = [s for s in self._streams if s.open]
            items = [(s, s.take()) for s in self._streams]
            self._wake.notify_all()  # blocked submitters: the mailbox is free
        return [(s, f) for s, f in items if f is not None]

    def _prepare(self, items: list) -> dict:
        """``{input key: [(stream, frame, prepared)]}``; a stream whose frame fails is failed."""
        groups: dict = {}
        for s, frame in items:
            size = tuple(frame.image.shape[:2]) if hasattr(frame.image, "shape") else None
            try:
                prepared = self.engine.stepper.prepare(frame.image)
            except Exception as e:  # noqa: BLE001 -- one stream fails, the thread goes on
                _log_unexpected(e, s.name)
                s.fail(f"{s.name}: frame {frame.index} cannot be used: {_line(e)}")
                continue
            if s.size is not None and size != s.size:
                log.info(
                    "%s: frame size changed from %s to %s; the stream starts afresh",
                    s.name,
                    s.size,
                    size,
                )
                s.state.reset()
            s.size = size
            groups.setdefault(prepared.key, []).append((s, frame, prepared))
        return groups

    def tick(self) -> int:
        """Step every stream with a frame waiting, one batched step per input size; returns the
        number of frames stepped."""
        items = self._take()
        done = 0
        for group in self._prepare(items).values():
            streams = [s for s, _, _ in group]
            try:
                outputs = self.engine.step([s.state for s in streams], [p for _, _, p in group])
            except Exception as e:  # noqa: BLE001 -- the group's streams fail, the thread goes on
                _log_unexpected(e, ", ".join(s.name for s in streams))
                for s in streams:
                    s.fail(f"{s.name}: the model failed on this stream's frame: {_line(e)}")
                continue
            end = now()
            stats = self.engine.stats
            for (s, frame, _), out in zip(group, outputs):
                s.deliver(Result(s.name, frame, out, stats.ms, stats.batch, end, s.dropped))
            done += len(group)
        with self._wake:
            self._wake.notify_all()  # wait_done() of ended streams
        return done

    def _pending(self) -> bool:
        return self._stop or any(s._pending is not None for s in self._streams)

    def _rests(self, empty_since: Optional[float]) -> Optional[float]:
        """Under the lock: when the streams ran out (None while there are some); ends the thread
        (``_resting``) after ``rest_after`` seconds without any."""
        if self.rest_after is None or any(not s.closed for s in self._streams):
            return None
        empty_since = now() if empty_since is None else empty_since
        if now() - empty_since > self.rest_after:
            self._thread, self._resting = None, True
        return empty_since

    def _loop(self) -> None:
        empty_since = None
        while True:
            with self._wake:
                self._wake.wait_for(self._pending, timeout=0.5)
                if self._stop:
                    return
                empty_since = self._rests(empty_since)
                if self._resting:
                    return
            self.tick()

    def _launch(self) -> None:
        self._resting = False
        self._thread = threading.Thread(target=self._loop, name=f"tsm-{self.name}", daemon=True)
        self._thread.start()

    def start(self) -> "Scheduler":
        """Step on a thread of its own until :meth:`close` (with ``rest_after``, the thread ends
        while no stream is open and the next :meth:`open` starts it again)."""
        with self._wake:
            if self._thread is None and not self._stop:
                self._launch()
        return self

    def close(self) -> None:
        """Stop the thread; every stream is closed."""
        with self._wake:
            self._stop = True
            for s in self._streams:
                s.closed = True
            self._wake.notify_all()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def __enter__(self) -> "Scheduler":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()
