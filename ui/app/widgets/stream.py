"""A live stream on the page: models fed a video frame by frame, each frame drawn as soon as it
is computed.

A stream lives in ``st.session_state`` (its models' shift buffers carried from frame to frame);
it restarts when the video or the models change. While it plays, ONE script run loops over the
frames and redraws a single placeholder in place (``st.empty``): no rerun per frame (docs/results.md
§6.4 has the measurement that chose this over a fragment re-run per frame). The next frame is
computed in a worker thread while the page draws and sends the current one (:func:`play`), so
the page shows frames at the models' rate rather than at the models' time plus the drawing. The
page stays responsive: any widget click stops the loop (Streamlit interrupts a run at its next
element when a rerun is asked for), the page runs again with the click applied and shows the
last frame computed, and a stream still playing goes on from there.
"""

from __future__ import annotations

import copy
import statistics
import threading
import time
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import streamlit as st

from .. import sources
from .tables import size_text

RATE_WINDOW = 20  # frames over which the playing rate is measured
# the thread that computes every frame of every live stream (the next frame while the current
# one is drawn, the first frame of a Play, a Step): ONE for the server, so model steps never run
# side by side (with a thread per stream, four sessions' models and drawing starved the server's
# event loop on two cores: pages closed long before their sessions ended); streams playing at
# once take turns, each in order
_AHEAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="live-step")


@dataclass
class Stream:
    """One live stream: ``step(t)`` computes frame ``t``; ``t`` is the last frame computed.

    ``latency_ms`` holds the models' time of every frame computed (``step`` alone, drawing
    left out); ``played`` the wall-clock times at which the frames computed while playing were
    done (the current run of Play only), so :meth:`rate` is the rate the user sees while playing
    -- models and drawing together -- and stays as it was while paused."""

    key: tuple
    num_frames: int
    step: Callable[[int], Any]
    t: int = -1
    playing: bool = False
    last: Any = None
    latency_ms: list = field(default_factory=list)
    played: deque = field(default_factory=lambda: deque(maxlen=RATE_WINDOW))
    # one frame at a time: after a click Streamlit may start the page's next run (fast reruns)
    # while the stopped run is still inside a model step; both runs step the same models
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def done(self) -> bool:
        return self.t >= self.num_frames - 1

    def advance(self) -> None:
        with self.lock:
            if self.done:
                return
            t0 = time.perf_counter()
            self.last = self.step(self.t + 1)
            t1 = time.perf_counter()
            self.latency_ms.append(1000 * (t1 - t0))
            self.t += 1
            if self.playing:
                self.played.append(t1)

    def snapshot(self) -> "Stream":
        """The stream as it is now (frame, result, figures) for drawing while the next frame
        is computed; waits for a step under way."""
        with self.lock:
            shot = copy.copy(self)
            shot.latency_ms, shot.played = list(self.latency_ms), deque(self.played, RATE_WINDOW)
        return shot

    def rate(self) -> Optional[float]:
        """Frames per second over the last frames computed while playing; None before two."""
        if len(self.played) < 2 or self.played[-1] <= self.played[0]:
            return None
        return (len(self.played) - 1) / (self.played[-1] - self.played[0])

    def model_ms(self) -> Optional[float]:
        """The models' median time a frame (ms) over the frames computed; None before one."""
        return statistics.median(self.latency_ms) if self.latency_ms else None


def stream_for(
    name: str, key: tuple, num_frames: int, make: Callable[[], Callable[[int], Any]]
) -> Stream:
    """The session's stream ``name``; a new one (``make()`` gives its step) when ``key``
    (video, models, settings) changed."""
    s = st.session_state.get(f"live_{name}")
    if s is None or s.key != key:
        s = Stream(key, num_frames, make())
        st.session_state[f"live_{name}"] = s
    return s


def drop(name: str) -> None:
    """Forget stream ``name`` (restart from frame 0 next time)."""
    st.session_state.pop(f"live_{name}", None)


def _play(s: Stream) -> None:
    s.played.clear()  # the rate is measured over this run of Play only
    s.playing = True


def _pause(s: Stream) -> None:
    s.playing = False


def _step(s: Stream) -> None:
    s.playing = False
    _AHEAD.submit(s.advance).result()


def controls(name: str, s: Stream) -> None:
    """Play / Pause / Step / Restart. Callbacks change the stream before the page is drawn, so
    the buttons match the new state."""
    c = st.columns(4)
    c[0].button(
        "▶ Stream" if s.t < 0 else "▶ Resume",
        key=f"live_{name}_play",
        disabled=s.playing or s.done,
        on_click=_play,
        args=(s,),
    )
    c[1].button(
        "Pause", key=f"live_{name}_pause", disabled=not s.playing, on_click=_pause, args=(s,)
    )
    c[2].button("Step", key=f"live_{name}_step", disabled=s.done, on_click=_step, args=(s,))
    c[3].button("Restart", key=f"live_{name}_restart", on_click=drop, args=(name,))


def play(s: Stream, show: Callable[[Stream], None]) -> None:
    """While ``s`` plays: compute its next frame and ``show`` a snapshot of it
    (:meth:`Stream.snapshot`), the frame after it being computed in the worker thread meanwhile
    (every step of every stream runs on that one thread). Every frame computed is shown, in
    order; a step's error is raised here. If ``show`` raises
    (a click interrupts the run), the frame under way is still computed and stays the stream's
    last one."""
    ahead: Optional[Future] = None
    while True:
        if ahead is not None:
            ahead.result()
        elif s.playing and not s.done:
            _AHEAD.submit(s.advance).result()
        else:
            return
        shot = s.snapshot()
        ahead = _AHEAD.submit(s.advance) if s.playing and not s.done else None
        show(shot)


def run(s: Stream, draw: Callable[[Stream], None], name: str) -> None:
    """The controls, then the stream's frame in one placeholder; while the stream plays this
    run loops (:func:`play`), redrawing the placeholder in place with each frame. ``draw``
    gets a snapshot of the stream, never the stream itself. Call it last on the page: a click
    anywhere stops the loop, and the elements below it would wait for it."""
    controls(name, s)
    slot = st.empty()

    def show(shot: Stream) -> None:
        with slot.container():
            draw(shot)

    try:
        show(s.snapshot())
        play(s, show)
    except (ValueError, RuntimeError, sources.Unavailable) as e:
        s.playing = False
        slot.error(f"The stream stopped: {e}")
        return
    if s.playing:  # the last frame is drawn: the page again, with the buttons of a finished one
        s.playing = False
        st.rerun()


def cache_text(num_bytes: Optional[int]) -> str:
    """``"shift cache 12.5 kB"``; ``None`` (a model without temporal shift): nothing is
    carried from frame to frame."""
    if num_bytes is None:
        return "no shift cache (no temporal shift: nothing carried between frames)"
    return f"shift cache {size_text(num_bytes)}"


def status(s: Stream, extra: str = "") -> str:
    """``'playing: frame 12/249 · last frame 85 ms · model median 80 ms · 9.8 frames/s while
    playing'``: the models' time of the last frame and their median over the frames computed,
    and the rate the page plays at."""
    last = f"{s.latency_ms[-1]:.0f} ms" if s.latency_ms else "-"
    median = s.model_ms()
    state = "playing" if s.playing else ("finished" if s.done else "paused")
    rate = s.rate()
    played = f"{rate:.1f} frames/s while playing" if rate is not None else "not played yet"
    return (
        f"{state}: frame {max(s.t, 0)}/{s.num_frames - 1} · last frame {last}"
        + (f" · model median {median:.0f} ms" if median is not None else "")
        + f" · {played}"
        + (f" · {extra}" if extra else "")
    )
