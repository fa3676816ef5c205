"""Attention view: TSN and TSM attention maps over the same clip, side by side, in step; two
modes: the clips of the dissection runs (here) and any two checkpoints on any video
(:mod:`.any_two`)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from .... import models
from ... import sources
from ...cache import result_store
from ...settings import DEMO_HINT, UISettings
from ...widgets import charts, player, tables
from ...widgets.dissection_run import load
from ...widgets.draw import upscale
from . import any_two

KEY = "att"
MIN_DISPLAY_WIDTH = 320
FLOW_TITLE = "{model} run: flow stream (same segments)"  # tsm dissect run --flow-checkpoint


def _clip(run: sources.Dissection, clip: str) -> sources.AttentionClip:
    def compute() -> sources.AttentionClip:
        bar = st.progress(0.0, text=f"computing attention maps of {clip}...")
        try:
            return sources.clip_attention(
                run,
                clip,
                progress=lambda f: bar.progress(
                    min(max(float(f), 0.0), 1.0), text=f"computing attention maps... {f:.0%}"
                ),
            )
        finally:
            bar.empty()

    key = ("attention", tuple(str(f) for f in run.folders.values()), clip)
    return result_store().get_or_compute(key, compute)


def _metrics_table(clip: sources.AttentionClip) -> None:
    """The clip's scores in [0, 1] as a table; top-1 and the mass ratio as captions."""
    if not clip.metrics:
        return
    scores = [
        k
        for k in dict.fromkeys(k for m in clip.metrics.values() for k in m)
        if k not in ("correct", "mass_ratio")
    ]
    tables.show(tables.numbers(clip.metrics, scores), tables.SCORE, labels=tables.DISSECTION_SCORES)
    st.caption(
        "top-1 correct: "
        + ", ".join(f"{m} {'yes' if v.get('correct') else 'no'}" for m, v in clip.metrics.items())
    )
    st.caption(
        tables.per_row(
            clip.metrics,
            "mass_ratio",
            tables.RATIO,
            "mass ratio (attention in acting / still frames)",
        )
    )


def _caption(clip: sources.AttentionClip, model: str, flow: bool, i: int) -> str:
    if flow:
        return f"{model} " + sources.flow_caption(clip.flow[model], i)
    return (
        f"{model} frame {i}/{len(clip.frames) - 1}: attention mass "
        f"{tables.amount(float(clip.mass[model][i]))}"
    )


RUN_MODE, ANY_MODE = "Clips of a dissection run", "Any two checkpoints on any video"


def render(settings: UISettings) -> None:
    st.header("Attention maps")
    mode = st.radio(
        "Show",
        [RUN_MODE, ANY_MODE],
        horizontal=True,
        key=f"{KEY}_mode",
        help="the maps a finished `tsm dissect run` stored, or maps computed here "
        "for two checkpoints you choose on a video you choose or upload",
    )
    if mode == ANY_MODE:
        any_two.render(settings)
        return
    _render_run(settings)


def _render_run(settings: UISettings) -> None:
    st.subheader("Where TSN and TSM look: the clips of their dissection runs")
    try:
        run = load(settings.runs_dir)
        clips = sources.dissection_clips(run) if run else []
    except (sources.Unavailable, ValueError, FileNotFoundError) as e:
        st.error(f"Cannot read the dissection runs: {e}")
        return
    if run is None:
        st.warning(
            'No dissection run found: choose "Any two checkpoints on any video" '
            "above to compute maps here."
        )
        st.info(DEMO_HINT.format(runs=settings.runs_dir))
        return
    missing = [m for m in sources.MODELS if m not in run.runs]
    if missing:
        st.warning(f"No dissection run of {', '.join(missing)}; showing what there is.")
    if not clips:
        st.warning("The dissection runs hold no finished clip in common.")
        return
    name = st.selectbox("Clip", clips, key=f"{KEY}_clip")
    per = st.radio(
        "Colour scale",
        ["clip", "frame"],
        horizontal=True,
        key=f"{KEY}_per",
        help="one scale for the whole clip (shows temporal changes) or per frame",
    )
    try:
        clip = _clip(run, name)
    except (sources.Unavailable, ValueError, sources.VideoDecodeError) as e:
        st.error(f"Cannot show clip {name}: {e}")
        return
    n = len(clip.frames)
    panels = [(m, f) for m in sources.MODELS for f in (False, True) if not f or m in clip.flow]
    images = {
        (m, f): sources.attention_overlay(clip, m, per, flow=f) for m, f in panels if m in clip.maps
    }
    shown = [p for p in panels if p in images]
    for model in sorted({m for m, f in panels if (m, f) not in images}):
        st.warning(f"no {model} maps in this run")
    st.markdown(
        " · ".join(f"**{FLOW_TITLE.format(model=m) if f else models.title(m)}**" for m, f in shown)
    )

    def draw(i: int) -> None:
        player.show_panels(
            [upscale(images[p][i], MIN_DISPLAY_WIDTH) for p in shown],
            [_caption(clip, m, f, i) for m, f in shown],
        )

    t = player.run(KEY, n, draw)
    if clip.gt_boxes is not None:
        st.caption(
            "green box: ground-truth actor" + (f" — class `{clip.label}`" if clip.label else "")
        )
    st.plotly_chart(
        charts.attention_mass({m: np.asarray(v) for m, v in clip.mass.items()}, frame=t),
        width="stretch",
        key=f"{KEY}_mass",
    )
    st.subheader("This clip's dissection metrics")
    _metrics_table(clip)
