"""The Streamlit app's script: ``tsm ui`` serves it through :mod:`ui.server` (which puts the
access gate in front of every route).

Layout only: the access check (:mod:`ui.app.access`), a sidebar to pick the view, then the
view's page (:mod:`ui.app.views`) draws it. Settings come from the environment
(:class:`ui.app.settings.UISettings`).
"""

from __future__ import annotations

import streamlit as st

from ui.app import access, sources
from ui.app.settings import UISettings
from ui.app.sources import uploads
from ui.app.views import attention, detection, live, runs

VIEWS = {
    "Detection": detection.render,
    "Attention": attention.render,
    "Live": live.render,
    "Runs": runs.render,
}


def main() -> None:
    st.set_page_config(page_title="TSM vs TSN", layout="wide")
    try:
        settings = UISettings.from_env()
    except ValueError as e:
        st.error(f"Bad setting: {e}")
        return
    if not access.gate(settings.token):  # nothing else is drawn before the token is given
        return
    st.sidebar.title("TSM vs TSN")
    view = st.sidebar.radio("View", list(VIEWS), key="view")
    st.sidebar.caption(f"runs folder: `{settings.runs_dir}`")
    if not settings.runs_dir.is_dir():
        st.sidebar.warning("the runs folder does not exist")
    try:
        VIEWS[view](settings)
    except (ValueError, OSError, sources.Unavailable, sources.VideoDecodeError) as e:
        st.error(f"{view} view: {uploads.as_given(str(e))}")  # never an upload's path


main()
