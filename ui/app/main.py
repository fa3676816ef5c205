"""The Streamlit app's script: ``tsm ui`` serves it through :mod:`ui.server` (which puts the
access gate in front of every route).

Layout only: the access check (:mod:`ui.app.access`), a sidebar to pick the view, then the
view's page (:mod:`ui.app.views`, then the pages other packages install) draws it. Settings
come from the environment (:class:`ui.app.settings.UISettings`).
"""

from __future__ import annotations

from importlib.metadata import EntryPoint

import streamlit as st

from ui.app import access, sources
from ui.app.settings import UISettings
from ui.app.sources import uploads
from ui.app.views import attention, detection, installed_views, live, runs

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
    installed = installed_views(VIEWS)
    view = st.sidebar.radio("View", [*VIEWS, *installed], key="view")
    st.sidebar.caption(f"runs folder: `{settings.runs_dir}`")
    if not settings.runs_dir.is_dir():
        st.sidebar.warning("the runs folder does not exist")
    try:
        render = VIEWS[view] if view in VIEWS else _load(installed[view])
        if render is not None:
            render(settings)
    except (ValueError, OSError, sources.Unavailable, sources.VideoDecodeError) as e:
        st.error(f"{view} view: {uploads.as_given(str(e))}")  # never an upload's path


def _load(entry: EntryPoint):
    """The page an installed package registers, or None after a one-line error naming it."""
    try:
        return entry.load()
    except Exception as e:  # another package's import error must not take the app down
        st.error(f"page {entry.name} ({entry.value}) could not be loaded: {type(e).__name__}: {e}")
        return None


main()
