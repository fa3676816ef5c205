"""One frame slider (with a play button) that drives every panel of a view in step.

Usage in a view::

    t = player.frame_slider("det", num_frames)
    slots = ...                      # st.empty() placeholders, one per panel
    player.show(t, render_frame)     # draws frame t into the slots
    player.maybe_play("det", num_frames, render_frame)

Playing draws the following frames into the same slots at ``fps`` and leaves the slider on the
last frame shown (a widget's value can only be set before it is drawn, hence the pending value).
"""
from __future__ import annotations

import time
from typing import Callable

import streamlit as st

DEFAULT_FPS = 6.0


def _pending(key: str) -> str:
    return f"{key}__pending"


def frame_slider(key: str, num_frames: int, label: str = "Frame") -> int:
    """Draw the play button and the slider for ``num_frames`` frames; return the frame index."""
    if num_frames < 1:
        raise ValueError(f"num_frames must be >= 1, got {num_frames}")
    if _pending(key) in st.session_state:
        st.session_state[key] = st.session_state.pop(_pending(key))
    if not 0 <= st.session_state.get(key, 0) < num_frames:
        st.session_state[key] = 0
    if num_frames == 1:
        st.caption(f"{label} 0 (single frame)")
        return 0
    play_col, slider_col = st.columns([1, 9], vertical_alignment="bottom")
    play_col.button("▶ Play", key=f"{key}__play", help="play from the current frame")
    return int(slider_col.slider(label, 0, num_frames - 1, key=key))


def maybe_play(key: str, num_frames: int, render: Callable[[int], None],
               fps: float = DEFAULT_FPS) -> None:
    """When the play button was pressed, render frames ``t+1 .. num_frames-1`` in turn."""
    if num_frames < 2 or not st.session_state.get(f"{key}__play"):
        return
    start = int(st.session_state.get(key, 0))
    if start >= num_frames - 1:
        start = -1  # at the end: play from the start
    last = start
    for t in range(start + 1, num_frames):
        time.sleep(1.0 / fps)
        render(t)
        last = t
    st.session_state[_pending(key)] = last
    st.rerun()
