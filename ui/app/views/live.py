"""Live view: TSN and online TSM side by side on the browser's camera, a stream URL or a video
file of any length.

Frames reach the server over WebRTC (``streamlit-webrtc`` on aiortc): the browser's camera, or a
URL / file the server reads at its own rate. Each frame goes to both models' streams on the
server's one model per checkpoint (:class:`ui.app.sources.live.Hub`: every viewer's streams step
in one batch); the video sent back shows both models' newest answers side by side. Below it the
page gives each model's answer as text (the frame it was computed on) and a latency meter:
answers computed and shown, frames dropped, capture-to-answer and capture-to-shown latency.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Optional

import streamlit as st

from ... import models
from .. import sources
from ..settings import DEMO_HINT, UISettings
from ..sources import live as live_sources
from ..sources import server_track
from ..widgets import checkpoint_picker, tables
from ..widgets.tables import size_text
from ..widgets.video_source import choose_video

KEY = "live"
RECOGNIZERS, DETECTORS = "Online recognizers", "Detectors"
CAMERA, URL, FILE = "Camera (this browser)", "Stream URL", "Video file"
REFRESH_S = 0.3  # the answers and the meter are redrawn this often while playing
LIVE_SCORE = 0.3  # the detectors' boxes drawn live score at least this


@st.cache_resource(show_spinner="Loading the online model...", max_entries=4)
def _recognizer_hub(name: str, path: str, mtime: float) -> live_sources.Hub:
    return live_sources.recognizer_hub(name, Path(path))


@st.cache_resource(show_spinner="Loading the detector...", max_entries=2)
def _detector_hub(name: str, folder: str, key: str) -> live_sources.Hub:
    return live_sources.detector_hub(name, Path(folder), LIVE_SCORE)


def _recognizers(settings: UISettings) -> Optional[dict]:
    found = checkpoint_picker.checkpoints(str(settings.runs_dir))
    if not found:
        st.warning("No recognizer checkpoint found under the runs folder.")
        st.info(DEMO_HINT.format(runs=settings.runs_dir))
        return None
    defaults = checkpoint_picker.default_pair(tuple(found))
    cols = st.columns(2)
    hubs = {}
    for col, name, default in zip(cols, models.MODELS, defaults):
        path = checkpoint_picker.pick_checkpoint(col, name, KEY, name, found, settings, default)
        if path is None:
            return None
        p = Path(path)
        hubs[name] = _recognizer_hub(name, str(p.resolve()), p.stat().st_mtime)
    return hubs


def _detectors(settings: UISettings) -> Optional[dict]:
    specs = sources.find_detectors(settings.runs_dir)
    if len(specs) < 2:
        missing = ", ".join(m for m in sources.MODELS if m not in specs)
        st.warning(f"Trained detector(s) missing: {missing}.")
        st.info(DEMO_HINT.format(runs=settings.runs_dir))
        return None
    return {n: _detector_hub(n, str(s.folder), s.key) for n, s in specs.items()}


def _source(settings: UISettings) -> Optional[tuple]:
    """``(kind, label, spec)``: the camera (spec None), a URL or a file the server opens."""
    kind = st.radio("Source", [CAMERA, URL, FILE], horizontal=True, key=f"{KEY}_source")
    if kind == CAMERA:
        st.caption(
            "Press START and allow the camera. Over the network the page must be served with "
            "HTTPS for the browser to offer its camera."
        )
        return kind, "camera", None
    if kind == URL:
        url = st.text_input(
            "Stream URL",
            key=f"{KEY}_url",
            placeholder="rtsp://camera.example/stream, https://.../index.m3u8, udp://...",
            help="the server opens it: rtsp(s), http(s) (HLS too), udp, rtp, srt, rtmp(s); "
            "local and private addresses only if `tsm ui --allow-stream-hosts` names them",
        ).strip()
        if not url:
            return None
        try:
            settings.stream_policy.check(url)
        except ValueError as e:
            st.error(f"Refused: {e}")
            return None
        return kind, url, url
    video = choose_video(settings, KEY)
    if video is None or video.path is None:
        return None
    if video.path.is_dir():
        st.warning("A frame folder cannot be played live; choose a video file.")
        return None
    st.caption(f"The server plays the whole file ({video.total} frames) at its own rate.")
    return kind, video.label, str(video.path)


class _Slot:
    """The session's live feed, made on the first frame of a START and closed at STOP."""

    def __init__(self, hubs: dict, label: str, settings: UISettings) -> None:
        self.hubs, self.label, self.settings = hubs, label, settings
        self.feed: Optional[live_sources.Feed] = None
        self.error: Optional[str] = None
        self.track = None
        self._lock = threading.Lock()

    def offer(self, image):
        with self._lock:
            if self.feed is None:
                rec = self.settings.record_live
                name = f"{time.strftime('%Y%m%d-%H%M%S')}-{id(self):x}"
                recorder = live_sources.Recorder(rec, name) if rec is not None else None
                self.feed = live_sources.Feed(self.hubs, self.label, recorder)
        return self.feed.offer(image)

    def player(self, spec: str):
        """The server-side source for streamlit-webrtc (called at START, on its thread)."""
        try:
            source = server_track.open_server_source(
                spec, self.settings.stream_policy, self.settings.frame_size * 2
            )
        except (ValueError, OSError, sources.VideoDecodeError) as e:
            self.error = str(e).splitlines()[0]
            return SimpleNamespace(video=None, audio=None)
        self.track = server_track.server_track(source)
        return SimpleNamespace(video=self.track, audio=None)

    def close(self) -> None:
        with self._lock:
            if self.feed is not None:
                self.feed.close()


def _slot(hubs: dict, label: str, settings: UISettings, key: tuple) -> _Slot:
    held = st.session_state.get(f"{KEY}_slot")
    if held is not None and held[0] == key:
        return held[1]
    if held is not None:
        held[1].close()
    slot = _Slot(hubs, label, settings)
    st.session_state[f"{KEY}_slot"] = (key, slot)
    return slot


def _callback(slot: _Slot, short_side: int):
    import av

    def on_frame(frame: "av.VideoFrame") -> "av.VideoFrame":
        w, h = sources.working_size(frame.width, frame.height, short_side)
        image = frame.to_ndarray(width=w, height=h, format="rgb24", interpolation="AREA")
        return av.VideoFrame.from_ndarray(slot.offer(image), format="rgb24")

    return on_frame


def render(settings: UISettings) -> None:
    from streamlit_webrtc import WebRtcMode, webrtc_streamer

    st.header("Live: TSN and online TSM on a camera, a stream or a video")
    what = st.radio("Models", [RECOGNIZERS, DETECTORS], horizontal=True, key=f"{KEY}_mode")
    hubs = _recognizers(settings) if what == RECOGNIZERS else _detectors(settings)
    if hubs is None:
        return
    source = _source(settings)
    if source is None:
        return
    kind, label, spec = source
    key = (what, tuple(id(h) for h in hubs.values()), kind, label)
    slot = _slot(hubs, label, settings, key)
    ctx = webrtc_streamer(
        key=f"{KEY}-{abs(hash(key)) % 10**8}",
        mode=WebRtcMode.SENDRECV if spec is None else WebRtcMode.RECVONLY,
        rtc_configuration={"iceServers": [{"urls": [u]} for u in settings.ice_servers]},
        media_stream_constraints={"video": True, "audio": False},
        video_frame_callback=_callback(slot, settings.frame_size),
        player_factory=None if spec is None else (lambda: slot.player(spec)),
    )
    panel = st.empty()
    while ctx.state.playing:
        with panel.container():
            _draw(slot)
        time.sleep(REFRESH_S)
    if slot.feed is not None:
        slot.close()
        with panel.container():
            _draw(slot)


def _draw(slot: _Slot) -> None:
    """Each model's newest answer (the frame it was computed on) and the meter."""
    if slot.error:
        st.error(f"The source stopped: {slot.error}")
    track_error = getattr(slot.track, "error", None)
    if track_error:
        st.error(f"The source stopped: {track_error}")
    feed = slot.feed
    if feed is None:
        st.caption("waiting for the first frame")
        return
    answers, figures = feed.answers(), feed.figures()
    for col, name in zip(st.columns(len(feed.hubs)), feed.hubs):
        with col:
            f = figures[name]
            if f["error"]:
                st.error(f["error"])
            got = answers.get(name)
            if got is None:
                st.caption(f"{name}: no answer yet")
            else:
                col.markdown(_answer_text(name, *got))
            st.caption(meter_text(f, figures["seconds"]))


def _answer_text(name: str, frame: int, record: dict) -> str:
    if "window" in record:
        rows = [(t["class"], t["prob"]) for t in record["window"]]
        return f"**{name}** on frame {frame} (last 12 frames)\n\n" + tables.top_k_text(rows)
    boxes = record.get("boxes", [])
    shown = ", ".join(f"{b['class']} {b['score']:.2f}" for b in boxes[:5]) or "none"
    return f"**{name}** on frame {frame}: {len(boxes)} box(es): {shown}"


def _ms(p: dict) -> str:
    return "-" if p["p50"] is None else f"p50 {p['p50']:.0f} / p95 {p['p95']:.0f} ms"


def meter_text(f: dict, seconds: float) -> str:
    """``"received 160 · answered 120 (19.8/s) · shown 114 (0.95 of answered) · dropped 40 ·
    step 31 ms · capture → answer p50 52 / p95 90 ms · capture → shown p50 60 / p95 110 ms ·
    batch 2 · shift cache 1.2 MB"``: frames received, answers computed (a second), answers drawn
    on a frame sent back, frames dropped (a newer one arrived first), the model's median step
    (every viewer's batch), latencies from a frame's arrival, the last step's batch."""
    rate = f["answered"] / seconds if seconds > 0 else 0.0
    share = f["shown"] / f["answered"] if f["answered"] else 0.0
    cache = (
        "no shift cache"
        if f["cache_bytes"] is None
        else f"shift cache {size_text(f['cache_bytes'])}"
    )
    step = "-" if f["step_ms"] is None else f"{f['step_ms']:.0f} ms"
    return (
        f"received {f['received']} · answered {f['answered']} ({rate:.1f}/s) · shown "
        f"{f['shown']} ({share:.2f} of answered) · dropped {f['dropped']} · step {step} · "
        f"capture → answer {_ms(f['answered_ms'])} · capture → shown {_ms(f['shown_ms'])} · "
        f"batch {f['batch']} · {cache}"
    )
