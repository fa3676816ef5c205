"""Live mode: models fed frame by frame, each frame drawn as soon as it is computed.

A stream lives in ``st.session_state`` (its models' shift buffers carried from frame to frame);
it restarts when the video or the models change. While it plays, a fragment re-runs itself
every :data:`INTERVAL` seconds (``st.fragment(run_every=...)``) and advances one frame per run,
so the page stays responsive: any widget still works, and Pause stops at the frame shown.
Streamlit queues a fragment's timed re-runs behind the running one, so the pace is the models'.
"""
from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

import streamlit as st

from . import player, sources, tables

INTERVAL = 0.05  # seconds between timed fragment runs (the models usually take longer)


RATE_WINDOW = 20  # frames over which the playing rate is measured


@dataclass
class Stream:
    """One live stream: ``step(t)`` computes frame ``t``; ``t`` is the last frame computed.

    ``played`` holds the wall-clock times at which the frames computed while playing were done
    (the current run of Play only), so :meth:`rate` is the rate the user sees while playing —
    models, drawing and the page's round trips together — and stays as it was while paused."""
    key: tuple
    num_frames: int
    step: Callable[[int], Any]
    t: int = -1
    playing: bool = False
    last: Any = None
    latency_ms: list = field(default_factory=list)
    played: deque = field(default_factory=lambda: deque(maxlen=RATE_WINDOW))

    @property
    def done(self) -> bool:
        return self.t >= self.num_frames - 1

    def advance(self) -> None:
        if self.done:
            return
        t0 = time.perf_counter()
        self.last = self.step(self.t + 1)
        t1 = time.perf_counter()
        self.latency_ms.append(1000 * (t1 - t0))
        self.t += 1
        if self.playing:
            self.played.append(t1)

    def rate(self) -> Optional[float]:
        """Frames per second over the last frames computed while playing; None before two."""
        if len(self.played) < 2 or self.played[-1] <= self.played[0]:
            return None
        return (len(self.played) - 1) / (self.played[-1] - self.played[0])


def stream_for(name: str, key: tuple, num_frames: int,
               make: Callable[[], Callable[[int], Any]]) -> Stream:
    """The session's stream ``name``; a new one (``make()`` gives its step) when ``key``
    (video, models, settings) changed."""
    s = st.session_state.get(f"live_{name}")
    if s is None or s.key != key:
        s = Stream(key, num_frames, make())
        st.session_state[f"live_{name}"] = s
    return s


def drop(name: str) -> None:
    """Forget stream ``name`` (its models are used elsewhere: restart from frame 0 next time)."""
    st.session_state.pop(f"live_{name}", None)


def _play(s: Stream) -> None:
    s.played.clear()  # the rate is measured over this run of Play only
    s.playing = True


def _pause(s: Stream) -> None:
    s.playing = False


def _step(s: Stream) -> None:
    s.playing = False
    s.advance()


def controls(name: str, s: Stream) -> None:
    """Play / Pause / Step / Restart. Callbacks change the stream before the page is drawn, so
    the buttons and the fragment's timer (on while ``playing``) match the new state."""
    c = st.columns(4)
    c[0].button("▶ Stream" if s.t < 0 else "▶ Resume", key=f"live_{name}_play",
                disabled=s.playing or s.done, on_click=_play, args=(s,))
    c[1].button("Pause", key=f"live_{name}_pause", disabled=not s.playing, on_click=_pause,
                args=(s,))
    c[2].button("Step", key=f"live_{name}_step", disabled=s.done, on_click=_step, args=(s,))
    c[3].button("Restart", key=f"live_{name}_restart", on_click=drop, args=(name,))


def run(s: Stream, draw: Callable[[Stream], None], name: str) -> None:
    """The controls and the stream, drawn now and, while it plays, one frame further per
    fragment run. The buttons live in the fragment, so a click reruns only the fragment and the
    buttons always match the state; the timer is set when the page runs, so starting a stream
    reruns the page once to switch it on (a paused stream's timer only redraws)."""
    timer = s.playing

    @st.fragment(run_every=INTERVAL if timer else None)
    def _live() -> None:
        controls(name, s)
        if s.playing and not timer:
            st.rerun()  # the whole page: the fragment's timer starts
        try:
            if s.playing:
                s.advance()
            draw(s)
        except (ValueError, RuntimeError, sources.Unavailable) as e:  # a fragment run is
            s.playing = False                                       # outside main's handler
            st.error(f"The stream stopped: {e}")
            return
        if s.playing and s.done:
            s.playing = False
            st.rerun()  # the whole page: the fragment's timer stops

    _live()


def size_text(num_bytes: int) -> str:
    """``"12.5 kB"`` below 1 MiB, else ``"1.23 MB"``."""
    return f"{num_bytes / 2**10:.1f} kB" if num_bytes < 2**20 else f"{num_bytes / 2**20:.2f} MB"


def cache_text(num_bytes: Optional[int]) -> str:
    """``"shift cache 12.5 kB"``; ``None`` (a model without temporal shift): nothing is
    carried from frame to frame."""
    if num_bytes is None:
        return "no shift cache (no temporal shift: nothing carried between frames)"
    return f"shift cache {size_text(num_bytes)}"


def status(s: Stream, extra: str = "") -> str:
    """``'playing: frame 12/249 · last frame 85 ms · 9.8 frames/s while playing'``."""
    last = f"{s.latency_ms[-1]:.0f} ms" if s.latency_ms else "-"
    state = "playing" if s.playing else ("finished" if s.done else "paused")
    rate = s.rate()
    played = f"{rate:.1f} frames/s while playing" if rate is not None else "not played yet"
    return (f"{state}: frame {max(s.t, 0)}/{s.num_frames - 1} · last frame {last} · {played}"
            + (f" · {extra}" if extra else ""))


# ----------------------------------------------------------------------------- recognition
def recognition(models: dict, video, offline: dict) -> None:
    """The online recognizer's top-5 as frames arrive, beside the offline answer on the clip."""
    st.subheader("Live: the online recognizer, frame by frame")
    label = {s: f"{s}: {Path(m.path.parent.name, m.path.name)}" for s, m in models.items()}
    slot = st.radio("Model streamed", list(models), horizontal=True, key="live_rec_slot",
                    format_func=label.get)
    rec = models[slot]

    def make() -> Callable[[int], Any]:
        online = _online(rec)
        live = sources.LiveRecognizer(online, rec.protocol)
        return lambda t: (live.step(video.frames[t]), live.running(),
                          None if online.shift is None else live.cache_bytes)

    key = (str(rec.path), video.key)
    s = stream_for("rec", key, len(video.frames), make)

    st.markdown(f"offline top-5 on the video ({len(offline['clips'][slot].indices)} segments "
                "a clip, the checkpoint's test protocol)")
    st.markdown(tables.top_k_text(sources.top_classes(offline[slot].probs, rec.names)))

    def draw(s: Stream) -> None:  # light elements only: it is redrawn for every frame
        if s.last is None:
            st.caption("press Stream or Step to play the video through the online model")
            return
        frame_p, running, cache = s.last
        st.caption(status(s, cache_text(cache)))
        left, right = st.columns(2)
        left.image(video.frames[s.t], width=320)
        right.markdown(f"online top-5 after {s.t + 1} frames (mean of the frame logits)\n\n"
                       + tables.top_k_text(sources.top_classes(running, rec.names)))
        right.caption(f"this frame alone: {sources.top_classes(frame_p, rec.names, 1)[0][0]}")

    run(s, draw, "rec")


@st.cache_resource(show_spinner="Loading the online model...", max_entries=2)
def _online_cached(path: str, mtime: float) -> sources.LoadedRecognizer:
    return sources.load_online(Path(path))


def _online(rec: sources.LoadedRecognizer) -> sources.LoadedRecognizer:
    return _online_cached(str(rec.path), rec.path.stat().st_mtime)


# ----------------------------------------------------------------------------- detection
def detection(detectors: dict, video, panel: Callable, key: tuple) -> None:
    """TSN and online-TSM detectors fed the video one frame at a time, side by side; each
    stream of this session has its own shift buffers (:class:`sources.DetectorStream`).
    ``panel(name, t, detections, extra) -> (image, caption)`` draws one model's frame."""

    def make() -> Callable[[int], Any]:
        streams = {n: sources.DetectorStream(d, iter(video.frames)) for n, d in detectors.items()}

        def step(t: int) -> dict:
            out = {}
            for n, stream in streams.items():
                t0 = time.perf_counter()
                dets = next(stream)
                out[n] = (dets, 1000 * (time.perf_counter() - t0), stream.cache_bytes)
            return out
        return step

    s = stream_for("det", (video.key, key), len(video.frames), make)

    def draw(s: Stream) -> None:
        if s.last is None:
            st.caption("press Stream or Step to play the video through both detectors")
            return
        drawn = [panel(n, s.t, dets, f"{ms:.0f} ms · {cache_text(cache)}")
                 for n, (dets, ms, cache) in s.last.items()]
        player.show_panels([d[0] for d in drawn], [d[1] for d in drawn])
        st.caption(status(s))

    run(s, draw, "det")
