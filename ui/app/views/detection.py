"""Detection view: the TSN and the online-TSM detectors on the same frames, side by side
(every frame computed first, then a slider; the Live view streams them frame by frame)."""

from __future__ import annotations

import math
from typing import Optional

import streamlit as st

from ... import models
from .. import sources
from ..cache import result_store
from ..settings import DEMO_HINT, UISettings
from ..sources import uploads
from ..widgets import charts, player, tables
from ..widgets.detection_panels import detector, panel_caption, render_frame, truth_toggle
from ..widgets.video_source import ChosenVideo, choose_video

KEY = "det"
SPLITS = ("overall", "slow", "medium", "fast", "corrupted")
PANELS = " · ".join(f"**{models.title(m, online=True)}**" for m in models.MODELS)


def _run_detectors(specs: dict, video: ChosenVideo) -> dict[str, list[sources.FrameDetections]]:
    """Detections of every model on ``video`` (computed once, with a progress bar)."""
    store, out = result_store(), {}
    for name, spec in specs.items():

        def compute(name: str = name, spec: sources.DetectorSpec = spec) -> list:
            bar = st.progress(0.0, text=f"{name}: detecting on {len(video.frames)} frames...")
            try:
                return sources.detect(
                    detector(spec, spec.key),
                    video.frames,
                    progress=lambda f: bar.progress(
                        min(max(float(f), 0.0), 1.0), text=f"{name}: detecting... {f:.0%}"
                    ),
                )
            finally:
                bar.empty()

        out[name] = store.get_or_compute(("detect", spec.key, video.key), compute)
    return out


def only_found_by(results: dict, truth: list, min_score: float) -> dict[str, list[int]]:
    """``{model: frames}`` where ``model`` finds a ground-truth object the other misses."""
    a, b = sources.MODELS
    found = {
        n: [sources.found_objects(d.keep(min_score), g) for d, g in zip(results[n], truth)]
        for n in (a, b)
    }
    return {
        a: [t for t, (x, y) in enumerate(zip(found[a], found[b])) if (x & ~y).any()],
        b: [t for t, (x, y) in enumerate(zip(found[a], found[b])) if (y & ~x).any()],
    }


def _timeline(results: dict, min_score: float, frame: int, marks: Optional[dict]):
    best = {
        n: [float(d.scores.max()) if len(d.scores) else math.nan for d in r]
        for n, r in results.items()
    }
    kept = {n: [len(d.keep(min_score).scores) for d in r] for n, r in results.items()}
    return charts.detection_timeline(best, kept, frame=frame, threshold=min_score, marks=marks)


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
    tables.show(tables.numbers(table, SPLITS), tables.PERCENT)
    st.caption(
        f"mAP (%) from `{path}`; slow/medium/fast: FGFA motion-IoU split; corrupted: "
        "frames marked in corruptions.json."
    )


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
    truth = truth_toggle(video, KEY)
    min_score = st.slider(
        "Minimum score shown", sources.SCORE_FLOOR, 1.0, 0.3, 0.05, key=f"{KEY}_min_score"
    )
    st.caption(f"Detecting on {video.limit_note(settings.limits)}.")
    try:
        results = _run_detectors(specs, video)
    except sources.Unavailable as e:
        st.error(f"Detection is not available: {uploads.as_given(str(e))}")
        return
    _browse(settings, video, results, min_score, truth)


def _browse(
    settings: UISettings, video: ChosenVideo, results: dict, min_score: float, truth: Optional[list]
) -> None:
    n = len(video.frames)

    def draw(i: int) -> None:
        kept = {name: results[name][i].keep(min_score) for name in sources.MODELS}
        player.show_panels(
            [render_frame(video.frames[i], kept[m], m, truth and truth[i]) for m in kept],
            [panel_caption(m, i, n, kept[m]) for m in kept],
        )

    st.markdown(PANELS)
    t = player.run(KEY, n, draw)
    marks = only_found_by(results, truth, min_score) if truth else None
    st.plotly_chart(_timeline(results, min_score, t, marks), width="stretch", key=f"{KEY}_timeline")
    if marks is not None:
        a, b = sources.MODELS
        st.caption(
            f"Marked frames: {b} finds a ground-truth object {a} misses in "
            f"{len(marks[b])} frame(s), {a} one {b} misses in {len(marks[a])} "
            "(VID matching: same class, IoU >= min(0.5, wh/((w+10)(h+10))), boxes "
            "above the minimum score)."
        )
    _map_table(settings)
