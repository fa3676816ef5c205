"""The TSN/TSM dissection runs of a runs folder, loaded once (used by the Attention and the Runs
pages)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import streamlit as st

from .. import sources


@st.cache_resource(show_spinner="Loading dissection runs...", max_entries=4)
def _dissection(folders: tuple, stamp: float) -> sources.Dissection:
    return sources.load_dissection({m: Path(f) for m, f in folders})


@st.cache_data(show_spinner=False, ttl=30)
def _find(root: str) -> tuple:
    found = sources.find_dissection(Path(root)) or {}
    return tuple((m, str(f)) for m, f in found.items())


def load(root: Path) -> Optional[sources.Dissection]:
    """The TSN/TSM dissection runs under ``root`` (cached), or ``None``."""
    folders = _find(str(root))
    if not folders:
        return None
    return _dissection(folders, sources.dissection_stamp({m: Path(f) for m, f in folders}))
