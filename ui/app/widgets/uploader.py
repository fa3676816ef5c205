"""An upload box that holds at most one file: the file the page uses.

Streamlit's ``file_uploader`` refuses a file over its ``max_upload_size`` in the browser (the
file never reaches the server, which is not told) and shows it as a red chip BESIDE the file it
held before, which the page goes on using. Here, once an upload is kept (:func:`held_upload`'s
``keep``), the uploader is replaced by an empty one (its widget key rotated) and the page names
the file it uses below it; a file refused later stands alone in the box with Streamlit's line
naming the limit, while the page still names the file in use. A file the app itself refuses
(``keep`` raises the caller's ``refusal``, e.g. ``sources.uploads.UploadError``) empties the
box too, the page naming the file and why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

import streamlit as st

from ..settings import DEFAULT_MAX_UPLOADS
from ..text import literal
from ..upload_allowance import UPLOADS
from .tables import size_text


@dataclass(frozen=True)
class Held:
    """The upload in use: the name the user gave the file, its size (bytes) and what ``keep``
    made of it."""

    name: str
    size: int
    value: Any


def _gen(key: str) -> str:
    return f"{key}__gen"


def _held(key: str) -> str:
    return f"{key}__held"


def _refused(key: str) -> str:
    return f"{key}__refused"


def held(key: str) -> Optional[Held]:
    """The upload box ``key``'s file in use, if any."""
    return st.session_state.get(_held(key))


def forget(key: str) -> None:
    """Drop box ``key``'s file (e.g. its kept copy is gone); the page asks for one again."""
    st.session_state.pop(_held(key), None)


def held_upload(
    label: str,
    key: str,
    types: list,
    max_mb: int,
    help: str,
    keep: Callable[[str, bytes], Any],
    refusal: type[Exception],
    where=st,
    max_uploads: int = DEFAULT_MAX_UPLOADS,
) -> Optional[Held]:
    """Draw upload box ``key`` (in ``where``: ``st`` or a column) and return its file in use.
    A new file goes through ``keep(name, data)``; kept, it becomes the file in use and the page
    runs again with an empty box; refused (``keep`` raised ``refusal``), the box is emptied and the
    error shown (naming the file and the limit or reason), the previous file staying in use.
    The box's limits are registered for the server's gate (:mod:`ui.app.upload_allowance`)."""
    _register(key, max_mb, max_uploads)
    gen = st.session_state.get(_gen(key), 0)
    up = where.file_uploader(
        label, type=types, key=f"{key}_{gen}", max_upload_size=max_mb, help=help
    )
    if up is not None:
        st.session_state[_gen(key)] = gen + 1  # the next box is an empty one
        data = up.getvalue()
        try:
            st.session_state[_held(key)] = Held(up.name, len(data), keep(up.name, data))
            st.session_state.pop(_refused(key), None)
        except refusal as e:
            st.session_state[_refused(key)] = str(e)
        st.rerun()
    refused = st.session_state.get(_refused(key))
    if refused:
        where.error(refused)
    return held(key)


def _register(key: str, max_mb: int, max_uploads: int) -> None:
    """Tell the server's upload allowance that this session's page shows box ``key``."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is not None:
        UPLOADS.box(ctx.session_id, key, int(max_mb * 2**20), max_uploads)


def in_use(h: Held) -> str:
    """``"Using `clip.mp4` (12.5 kB), uploaded; choose another file to replace it."`` (the name
    as the user gave it, shown literally: :func:`ui.app.text.literal`)."""
    return (
        f"Using {literal(h.name)} ({size_text(h.size)}), uploaded; "
        "choose another file to replace it."
    )


def gone(h: Held) -> str:
    """The line for an upload removed with the session's idle uploads."""
    return f"{literal(h.name)} was removed with this session's idle uploads; upload it again."
