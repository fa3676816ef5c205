"""The Attention page's second mode: attention of any two recognizers on any video (checkpoints
from the runs folder, a typed path or an upload: :mod:`ui.app.widgets.checkpoint_picker`; a VID
snippet, a video of the runs folder or an upload); CAM or a Grad-CAM method; each model's top-1
or a chosen class; both models' top-5; maps side by side, in step; optionally a flow model's
maps beside them (:mod:`ui.app.widgets.flow_panel`)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import streamlit as st

from ....models import MODELS
from ... import sources
from ...cache import result_store
from ...settings import UISettings
from ...sources import runs_folder, uploads
from ...text import literal
from ...widgets import flow_panel, player, tables
from ...widgets.checkpoint_picker import checkpoints, default_pair, load, pick_checkpoint
from ...widgets.draw import upscale
from ...widgets.video_source import ChosenVideo, choose_video

KEY = "attc"
TOP1 = "each model's top-1"
MIN_DISPLAY_WIDTH = 320
SLOTS = ("A", "B")
VIEWS = {
    "crop": "what tsm test scores (the checkpoint's test protocol)",
    "frame": "the whole frame (shorter side at the protocol's scale)",
}


def _sidebar() -> tuple[str, str, str]:
    st.sidebar.subheader("Attention maps")
    methods = sources.map_methods()
    method = st.sidebar.selectbox(
        "Map method",
        methods,
        key=f"{KEY}_method",
        help="cam: the exact CAM; the others: the Grad-CAM family",
    )
    view = st.sidebar.radio(
        "Input",
        list(VIEWS),
        key=f"{KEY}_view",
        format_func=VIEWS.get,
        help="each model sees the clip through its own test protocol "
        "(frames, resize, crop), as tsm test and tsm dissect run do",
    )
    per = st.sidebar.radio("Colour scale", ["clip", "frame"], horizontal=True, key=f"{KEY}_per")
    return method, view, per


def _class_choice(models: dict) -> Optional[int]:
    names = [m.names for m in models.values()]
    if any(len(n) != len(names[0]) for n in names):
        st.caption("The models have different class counts: each explains its own top-1.")
        return None
    options = [TOP1] + [f"{i}: {n}" for i, n in enumerate(names[0])]
    choice = st.selectbox("Class explained", options, key=f"{KEY}_class")
    return None if choice == TOP1 else int(choice.split(":", 1)[0])


def _compute(models: dict, video: ChosenVideo, method: str, view: str, cls: Optional[int]) -> dict:
    """``{slot: ModelMaps}`` and ``{"clips": {slot: ClipInput}}``: each model's answer on the
    video under its own test protocol and its maps on the protocol's first view (cached per
    checkpoint, video, view, method, class)."""
    store, out, clips = result_store(), {}, {}
    bar = st.progress(0.0, text="computing attention maps...")
    try:
        for i, (slot, rec) in enumerate(models.items()):
            bar.progress(i / len(models), text=f"model {slot}: {method}...")
            clip, probs = answer(rec, video, view)
            key = ("maps", _clip_key(rec, video, view), method, cls)
            out[slot] = store.get_or_compute(  # on this session's own copy of the model
                key,
                lambda rec=rec, clip=clip, probs=probs: sources.model_maps(
                    sources.for_session(rec), clip, method, cls, probs
                ),
            )
            clips[slot] = clip
    finally:
        bar.empty()
    return {"clips": clips, **out}


def _clip_key(rec: sources.LoadedRecognizer, video: ChosenVideo, view: str) -> tuple:
    return ("clip", video.key, str(rec.path), rec.path.stat().st_mtime, view)


def answer(rec: sources.LoadedRecognizer, video: ChosenVideo, view: str) -> tuple:
    """``(ClipInput, probs (K,))``: ``rec``'s answer on ``video`` under its test protocol
    (:func:`sources.prepare_clip`, on the video's file when it has one), cached per
    checkpoint, video and view."""
    return result_store().get_or_compute(
        _clip_key(rec, video, view),
        lambda: sources.prepare_clip(sources.for_session(rec), video.frames, video.path, view),
    )


def render(settings: UISettings) -> None:
    method, view, per = _sidebar()
    root = settings.runs_dir
    found = checkpoints(str(root))
    pair = default_pair(tuple(found))
    cols = st.columns(2)
    paths = {
        s: pick_checkpoint(c, f"Model {s}", KEY, s, found, settings, pair[i])
        for i, (s, c) in enumerate(zip(SLOTS, cols))
    }
    video = choose_video(settings, KEY)
    if video is None:
        return
    flow_choice = flow_panel.choose(found, settings)
    if video.cut or video.scale != 1.0:
        st.caption(sampling_note(video, settings))
    if not all(paths.values()):
        st.info(
            "Choose two checkpoints (found under the runs folder, a path typed in, or an upload)."
        )
        return
    models = {}
    for slot, path in paths.items():
        try:
            models[slot] = load(path)
        except ValueError as e:
            st.error(f"Model {slot}: {uploads.as_given(str(e))}")
            return
    cls = _class_choice(models)
    try:
        res = _compute(models, video, method, view, cls)
    except (ValueError, RuntimeError) as e:
        st.error(f"Cannot compute the maps: {uploads.as_given(str(e))}")
        return
    clips = res["clips"]
    clip = clips[SLOTS[0]]
    flow = flow_panel.compute(flow_choice, video, clip, method, clip.protocol.crop_size, cls)
    images = {s: sources.maps_on_frames(clips[s], res[s].maps, per) for s in models}
    if flow is not None:
        images["flow"] = sources.maps_on_frames(clip, flow.maps, per)
    st.subheader(heading(models))
    st.markdown(
        " · ".join(
            [
                f"**Model {slot}:** {shown_name(rec.path, root)} — {rec.kind}"
                for slot, rec in models.items()
            ]
            + ([f"**{flow_panel.TITLE}**"] if flow is not None else [])
        )
    )

    def caption(slot: str, k: int) -> str:
        if slot == "flow":
            return sources.flow_caption(flow, k)
        m, rec, c = res[slot], models[slot], clips[slot]
        return (
            f"{slot} frame {k}/{len(c.indices) - 1} (video frame "
            f"{int(c.indices[k])}): {method} of '{rec.names[m.explained]}'"
        )

    def draw(k: int) -> None:
        player.show_panels(
            [upscale(images[s][k], MIN_DISPLAY_WIDTH) for s in images],
            [caption(s, k) for s in images],
        )

    player.run(KEY, min(len(c.indices) for c in clips.values()), draw)
    for col, (slot, rec) in zip(st.columns(2), models.items()):
        with col:
            st.markdown(f"Top-5 of model {slot} on the video")
            st.caption(rec.protocol.describe())
            tables.top_k_table(sources.top_classes(res[slot].probs, rec.names))


def sampling_note(video: ChosenVideo, settings: UISettings) -> str:
    """What the maps are of and what the player decoded: the models sample the whole video
    file through their test protocol (the panels name the video frames), whatever part of it
    was decoded for the player."""
    whole = f"all {video.total} frames" if video.path is not None else f"{len(video.frames)} frames"
    return (
        f"The maps are of the frames each model's test protocol samples from {whole} of the "
        f"video (each panel names its video frame); decoded for the player: "
        f"{video.limit_note(settings.limits)}."
    )


def shown_name(path: Path, root: Path) -> str:
    """A checkpoint as the page names it, literally (:func:`ui.app.text.literal`): an upload
    by the name the user gave it (never its kept path), a file of the runs folder relative to
    it, any other file by its path."""
    name = uploads.given_name(path)
    return literal(name if name is not None else runs_folder.rel(Path(path), Path(root).resolve()))


def heading(loaded: dict) -> str:
    """``'Where TSN and TSM look'`` for a TSN and a TSM; the slots' kinds otherwise."""
    kinds = {rec.kind.split(" ")[0] for rec in loaded.values()}
    if kinds == set(MODELS):
        return f"Where {' and '.join(MODELS)} look"
    return "Where " + " and ".join(f"model {s} ({rec.kind})" for s, rec in loaded.items()) + " look"
