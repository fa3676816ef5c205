"""Detection view: the TSN and the online-TSM detectors on the same frames, side by side."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from . import charts, player, sources
from .cache import result_store
from .draw import MODEL_COLORS, draw_boxes, upscale
from .settings import DEMO_HINT, UISettings
from .video_source import ChosenVideo, choose_video

KEY = "det"
MIN_DISPLAY_WIDTH = 320
SPLITS = ("overall", "slow", "medium", "fast", "corrupted")
PANEL_TITLES = {"TSN": "TSN (per-frame 2D baseline)", "TSM": "TSM (online, causal shift)"}


@st.cache_resource(show_spinner="Loading detector...")
def _detector(spec: sources.DetectorSpec, stamp: str):
    return sources.load_detector(spec)


def _run_detectors(specs: dict, video: ChosenVideo) -> dict[str, list[sources.FrameDetections]]:
    """Detections of every model on ``video`` (computed once, with a progress bar)."""
    store, out = result_store(), {}
    for name, spec in specs.items():
        def compute(name: str = name, spec: sources.DetectorSpec = spec) -> list:
            bar = st.progress(0.0, text=f"{name}: detecting on {len(video.frames)} frames...")
            try:
                return sources.detect(_detector(spec, spec.key), video.frames, progress=lambda f:
                                      bar.progress(min(max(float(f), 0.0), 1.0),
                                                   text=f"{name}: detecting... {f:.0%}"))
            finally:
                bar.empty()
        out[name] = store.get_or_compute(("detect", spec.key, video.key), compute)
    return out


def _render_frame(frame: np.ndarray, dets: sources.FrameDetections, name: str) -> np.ndarray:
    big = upscale(frame, MIN_DISPLAY_WIDTH)
    k = big.shape[1] / frame.shape[1]
    captions = [f"{lb} {s:.2f}" for lb, s in zip(dets.labels, dets.scores)]
    return draw_boxes(big, dets.boxes * k, captions, color=MODEL_COLORS[name])


def _timeline(results: dict, min_score: float, frame: int):
    best = {n: [float(d.scores.max()) if len(d.scores) else math.nan for d in r]
            for n, r in results.items()}
    kept = {n: [len(d.keep(min_score).scores) for d in r] for n, r in results.items()}
    return charts.detection_timeline(best, kept, frame=frame, threshold=min_score)


def _map_table(settings: UISettings, hinted: bool = False) -> None:
    """The latest mAP table; when it is missing, say so (``hinted``: the page already shows
    how to make results, so only a short caption)."""
    st.subheader("ImageNet-VID mAP (latest evaluation)")
    try:
        table, path = sources.vid_results(settings.runs_dir)
    except (sources.Unavailable, FileNotFoundError, ValueError) as e:
        if hinted:
            st.caption("No VID evaluation results yet.")
        else:
            st.info(f"No VID evaluation results to show: {e}")
        return
    df = pd.DataFrame({m: {s: row.get(s) for s in SPLITS} for m, row in table.items()}).T
    st.dataframe(df.style.format("{:.1f}", na_rep="-"), width="stretch")
    st.caption(f"mAP (%) from `{path}`; slow/medium/fast: FGFA motion-IoU split; corrupted: "
               "frames marked in corruptions.json.")


def render(settings: UISettings) -> None:
    st.header("Detection: TSN vs online TSM")
    specs = sources.find_detectors(settings.runs_dir)
    if len(specs) < 2:
        missing = ", ".join(m for m in sources.MODELS if m not in specs)
        st.warning(f"Trained detector(s) missing: {missing}.")
        st.info(DEMO_HINT.format(runs=settings.runs_dir))
        _map_table(settings, hinted=True)
        return
    video = choose_video(settings, KEY)
    if video is None:
        _map_table(settings)
        return
    try:
        results = _run_detectors(specs, video)
    except sources.Unavailable as e:
        st.error(f"Detection is not available: {e}")
        return
    min_score = st.slider("Minimum score shown", 0.0, 1.0, 0.3, 0.05, key=f"{KEY}_min_score")
    n = len(video.frames)
    t = player.frame_slider(KEY, n)
    cols = st.columns(2)
    slots = {}
    for col, name in zip(cols, sources.MODELS):
        col.markdown(f"**{PANEL_TITLES[name]}**")
        slots[name] = (col.empty(), col.empty())

    def show(i: int) -> None:
        for name, (img_slot, cap_slot) in slots.items():
            dets = results[name][i].keep(min_score)
            img_slot.image(_render_frame(video.frames[i], dets, name), width="stretch")
            top = ", ".join(f"{lb} {s:.2f}" for lb, s in zip(dets.labels[:3], dets.scores[:3]))
            cap_slot.caption(f"{name} frame {i}/{n - 1}: {len(dets.scores)} box(es)"
                             + (f" — {top}" if top else ""))

    show(t)
    st.plotly_chart(_timeline(results, min_score, t), width="stretch", key=f"{KEY}_timeline")
    _map_table(settings)
    player.maybe_play(KEY, n, show)
