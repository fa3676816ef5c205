"""The flow stream beside the two models of the Attention view's "any video" mode: a flow
checkpoint (found under the runs folder or a typed path) and the video's flow folder
(``tsm flow extract``: the folder holding its ``flow_x_00001.jpg``..., or the ``--out`` folder
holding it); the flow model's maps on the flow stacks of the clip's segments
(:func:`ui.app.sources.flow_maps`). Nothing changes on the page while no flow checkpoint is
chosen."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import streamlit as st

from .. import access, sources
from ..cache import result_store
from ..settings import UISettings
from ..sources import runs_folder, uploads
from .video_source import ChosenVideo

KEY = "attf"
NONE, TYPED = "(no flow stream)", "(type a path)"
TITLE = "Flow stream (same segments)"


@st.cache_resource(show_spinner="Loading flow recognizer...", max_entries=2)
def _recognizer(path: str, mtime: float) -> sources.LoadedRecognizer:
    return sources.load_flow_recognizer(Path(path))


def choose(found: list[str], settings: UISettings) -> Optional[tuple[str, str]]:
    """``(flow checkpoint, flow folder)`` chosen in an expander, or None (no flow stream);
    typed paths are confined to the folders the app may read, relative ones read in the runs
    folder."""
    root = settings.runs_dir
    with st.expander("Flow stream (optional): the flow CAM beside the RGB maps"):
        left, right = st.columns(2)
        choice = left.selectbox(
            "Flow checkpoint",
            [NONE] + found + [TYPED],
            key=f"{KEY}_ckpt",
            format_func=lambda p: p if p in (NONE, TYPED) else runs_folder.rel(Path(p), root),
        )
        if choice == TYPED:
            choice = left.text_input("Flow checkpoint path", key=f"{KEY}_path").strip() or NONE
        folder = right.text_input(
            "Flow folder",
            key=f"{KEY}_dir",
            placeholder="/path/to/flow/<video>",
            help="this video's flow_x_00001.jpg... (tsm flow extract VIDEO --out DIR), or DIR",
        )
    if choice == NONE:
        return None
    if not folder.strip():
        st.info("Flow stream: give the video's flow folder (tsm flow extract VIDEO --out DIR).")
        return None
    try:  # a relative path is read in the runs folder, as the lists show paths
        return str(access.read_typed(choice, settings)), str(access.read_typed(folder, settings))
    except access.PathRefused as e:
        st.error(f"Flow stream: {e}")
        return None


def compute(
    choice: Optional[tuple[str, str]],
    video: ChosenVideo,
    clip: sources.ClipInput,
    method: str,
    size: int,
    cls: Optional[int],
) -> Optional[sources.FlowMaps]:
    """The flow model's maps on ``clip`` (cached), or None with the reason on the page."""
    if choice is None:
        return None
    path, flow_dir = Path(choice[0]), choice[1]
    try:
        if path.is_dir():
            raise ValueError(f"{path} is a folder; expected a flow checkpoint file (.pth)")
        if not path.is_file():
            raise ValueError(f"checkpoint not found: {path}")
        rec = _recognizer(str(path.resolve()), path.stat().st_mtime)
        folder = sources.video_flow_folder(Path(flow_dir), video.path, video.label)
        key = (
            "flow",
            str(rec.path),
            rec.path.stat().st_mtime,
            str(folder),
            video.key,
            tuple(int(i) for i in clip.indices),
            size,
            method,
            cls,
        )
        return result_store().get_or_compute(
            key,
            lambda: sources.flow_maps(
                sources.for_session(rec),
                folder,
                clip,
                size,
                method,
                cls,
                video.total or None,
                video.label,
            ),
        )
    except (ValueError, FileNotFoundError, RuntimeError) as e:  # an upload named as given
        st.error(f"Flow stream: {uploads.as_given(str(e))}")
        return None
