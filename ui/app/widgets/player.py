"""One frame slider with a play button that drives every panel of a view in step, without
blocking the page.

Usage in a view::

    def draw(i: int) -> None:        # draws frame i of every panel (columns, images, captions)
        ...
    t = player.run("det", num_frames, draw)   # the frame shown; charts below mark it

The slider, the play button and the panels live in one fragment (``st.fragment``): moving the
slider redraws the page once (so the charts below follow), and playing re-runs only the fragment,
one frame per run every ``1/fps`` seconds, as the live mode does — every widget of the page keeps
working while it plays, and Pause stops at the frame shown. When playing ends the page is drawn
again at the last frame.
"""

from __future__ import annotations

from typing import Callable

import streamlit as st

from .draw import shown

DEFAULT_FPS = 6.0


def _playing(key: str) -> str:
    return f"{key}__playing"


def _drawn(key: str) -> str:
    return f"{key}__drawn"


def _start(key: str, num_frames: int) -> None:
    if st.session_state.get(key, 0) >= num_frames - 1:
        st.session_state[key] = 0  # at the end: play from the start
    st.session_state[_playing(key)] = True


def _stop(key: str) -> None:
    st.session_state[_playing(key)] = False


def playing(key: str) -> bool:
    return bool(st.session_state.get(_playing(key)))


def run(
    key: str,
    num_frames: int,
    draw: Callable[[int], None],
    label: str = "Frame",
    fps: float = DEFAULT_FPS,
) -> int:
    """Draw the player of ``num_frames`` frames and frame ``t`` through ``draw(t)``; return ``t``
    as the page shows it (the first frame to play from while the fragment plays)."""
    if num_frames < 1:
        raise ValueError(f"num_frames must be >= 1, got {num_frames}")
    if not 0 <= st.session_state.get(key, -1) < num_frames:
        st.session_state[key] = 0
    if num_frames == 1:
        _stop(key)
        st.caption(f"{label} 0 (single frame)")
        draw(0)
        return 0
    timer = playing(key)
    st.session_state[_drawn(key)] = st.session_state[key]

    @st.fragment(run_every=1.0 / fps if timer else None)
    def _player() -> None:
        if playing(key) != timer:
            st.rerun()  # play pressed (the timer starts) or stopped (it stops): the whole page
        if timer:
            st.session_state[key] = min(st.session_state[key] + 1, num_frames - 1)
        elif st.session_state[key] != st.session_state[_drawn(key)]:
            st.rerun()  # the slider moved: the whole page, so the charts follow
        _controls(key, num_frames, label, timer)
        draw(int(st.session_state[key]))
        if timer and st.session_state[key] >= num_frames - 1:
            _stop(key)
            st.rerun()

    _player()
    return int(st.session_state[_drawn(key)])


def _controls(key: str, num_frames: int, label: str, timer: bool) -> None:
    play_col, slider_col = st.columns([1, 9], vertical_alignment="bottom")
    if timer:
        play_col.button(
            "⏸ Pause",
            key=f"{key}__pause",
            on_click=_stop,
            args=(key,),
            help="stop at the frame shown",
        )
    else:
        play_col.button(
            "▶ Play",
            key=f"{key}__play",
            on_click=_start,
            args=(key, num_frames),
            help="play from the current frame",
        )
    slider_col.slider(label, 0, num_frames - 1, key=key, disabled=timer)


ROW_WIDTH = 740
"""px: the panels of one frame share a row this wide, so they stay side by side down to a
1,280-px-wide window with the sidebar open (about 780 px of content); larger frames are scaled
down to fit."""


def show_panels(images: list, captions: list, row_width: int = ROW_WIDTH) -> None:
    """The panels of one frame (uint8 ``(H, W, 3)`` images, one caption each) as ONE element,
    a row of images: a redraw replaces all of them at once, so no panel ever shows another
    frame than its neighbours."""
    if len(images) != len(captions):
        raise ValueError(f"{len(images)} panels but {len(captions)} captions")
    width = int(min(row_width // max(len(images), 2), max(im.shape[1] for im in images)))
    st.image([shown(im, width) for im in images], caption=list(captions), width=width)
