"""Live view: a video fed frame by frame through the online recognizer, or through the TSN and
online-TSM detectors side by side, each frame drawn as soon as it is computed
(:mod:`ui.app.widgets.stream`)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

import streamlit as st

from ... import models
from .. import sources
from ..settings import DEMO_HINT, UISettings
from ..widgets import comparison, detection_panels, player, tables
from ..widgets.draw import shown
from ..widgets.stream import Stream, cache_text, run, status, stream_for
from ..widgets.video_source import ChosenVideo, choose_video

KEY = "live"
RECOGNIZER, DETECTORS = "Online recognizer", "Both detectors side by side"
FRAME_WIDTH = 480  # px: the recognizer's frame on the page


def render(settings: UISettings) -> None:
    st.header("Live: models fed the video frame by frame")
    mode = st.radio(
        "Stream through",
        [RECOGNIZER, DETECTORS],
        horizontal=True,
        key=f"{KEY}_mode",
        help="each frame is drawn as soon as the models have "
        "computed it; the status line gives the models' time a frame and the rate "
        "the page plays at",
    )
    if mode == RECOGNIZER:
        _recognizer(settings)
    else:
        _detectors(settings)


# ----------------------------------------------------------------------------- recognition
@st.cache_resource(show_spinner="Loading the online model...", max_entries=2)
def _online_cached(path: str, mtime: float) -> sources.LoadedRecognizer:
    return sources.load_online(Path(path))


def _online(rec: sources.LoadedRecognizer) -> sources.LoadedRecognizer:
    return _online_cached(str(rec.path), rec.path.stat().st_mtime)


def _recognizer(settings: UISettings) -> None:
    found = comparison.checkpoints(str(settings.runs_dir))
    if not found:
        st.warning("No recognizer checkpoint found under the runs folder.")
        st.info(DEMO_HINT.format(runs=settings.runs_dir))
        return
    default = comparison.default_pair(tuple(found))[1]  # the first TSM when there is one
    path = comparison.pick_checkpoint(st, "Model streamed", KEY, "rec", found, settings, default)
    video = choose_video(settings, KEY)
    if video is None or path is None:
        return
    rec = comparison.load(path)
    st.caption(f"Streaming {video.limit_note(settings.limits)}.")
    try:
        _, probs = comparison.answer(rec, video, "crop")
    except RuntimeError as e:
        st.error(f"Cannot run {rec.path.name} on this video: {e}")
        return
    st.markdown(f"offline top-5 on the video ({rec.protocol.describe()})")
    st.markdown(tables.top_k_text(sources.top_classes(probs, rec.names)))
    recognition(rec, video)


def recognition(rec: sources.LoadedRecognizer, video: ChosenVideo) -> None:
    """The online recognizer's top-5 as frames arrive."""
    st.subheader(f"Online: {Path(rec.path.parent.name, rec.path.name)} — {rec.kind}")

    def make() -> Callable[[int], Any]:
        online = _online(rec)
        stream = sources.LiveRecognizer(online, rec.protocol)
        return lambda t: (
            stream.step(video.frames[t]),
            stream.running(),
            None if online.shift is None else stream.cache_bytes,
        )

    s = stream_for("rec", (str(rec.path), video.key), len(video.frames), make)

    def draw(s: Stream) -> None:  # light elements only: it is redrawn for every frame
        if s.last is None:
            st.caption("press Stream or Step to play the video through the online model")
            return
        frame_p, running, cache = s.last
        st.caption(status(s, cache_text(cache)))
        left, right = st.columns(2)
        width = min(FRAME_WIDTH, video.frames.shape[2])
        left.image(shown(video.frames[s.t], width), width=width)
        right.markdown(
            f"online top-5 after {s.t + 1} frames (mean of the frame logits)\n\n"
            + tables.top_k_text(sources.top_classes(running, rec.names))
        )
        best = sources.top_classes(frame_p, rec.names, 1)[0][0]
        right.caption(f"this frame alone: {best}")

    run(s, draw, "rec")


# ----------------------------------------------------------------------------- detection
def _detectors(settings: UISettings) -> None:
    specs = sources.find_detectors(settings.runs_dir)
    if len(specs) < 2:
        missing = ", ".join(m for m in sources.MODELS if m not in specs)
        st.warning(f"Trained detector(s) missing: {missing}.")
        st.info(DEMO_HINT.format(runs=settings.runs_dir))
        return
    video = choose_video(settings, KEY)
    if video is None:
        return
    truth = detection_panels.truth_toggle(video, KEY)
    min_score = st.slider(
        "Minimum score shown", sources.SCORE_FLOOR, 1.0, 0.3, 0.05, key=f"{KEY}_min_score"
    )
    st.caption(f"Streaming {video.limit_note(settings.limits)}.")
    detectors = {n: detection_panels.detector(s, s.key) for n, s in specs.items()}

    def panel(name: str, t: int, dets: sources.FrameDetections, extra: str) -> tuple:
        kept = dets.keep(min_score)
        return (
            detection_panels.render_frame(video.frames[t], kept, name, truth[t] if truth else None),
            detection_panels.panel_caption(name, t, len(video.frames), kept, extra),
        )

    st.markdown(" · ".join(f"**{models.title(m, online=True)}**" for m in models.MODELS))
    detection(detectors, video, panel, key=tuple(s.key for s in specs.values()))


def detection(detectors: dict, video: ChosenVideo, panel: Callable, key: tuple) -> None:
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
        drawn = [
            panel(n, s.t, dets, f"{ms:.0f} ms · {cache_text(cache)}")
            for n, (dets, ms, cache) in s.last.items()
        ]
        st.caption(status(s))
        player.show_panels([d[0] for d in drawn], [d[1] for d in drawn])

    run(s, draw, "det")
