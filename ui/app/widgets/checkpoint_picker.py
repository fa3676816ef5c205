"""The checkpoint picker the pages share: the checkpoints found under the runs folder, the
pair a page starts on (a TSN and a TSM), a selectbox with a typed path or an upload, and the
recognizer of a chosen file (loaded once per server)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import streamlit as st

from ...models import TSM, TSN
from .. import access, session, sources
from ..settings import UISettings
from ..sources import runs_folder, uploads
from . import uploader

TYPED = "(type a path)"
UPLOADED = "(upload a checkpoint)"


@st.cache_data(show_spinner=False, ttl=30)
def checkpoints(root: str) -> list[str]:
    """The checkpoints found under the runs folder ``root`` (paths)."""
    return [str(p) for p in runs_folder.find_checkpoints(Path(root))]


@st.cache_resource(show_spinner="Loading recognizer...", max_entries=4)
def recognizer(path: str, mtime: float) -> sources.LoadedRecognizer:
    return sources.load_recognizer(Path(path))


@st.cache_data(show_spinner=False, ttl=30)
def default_pair(found: tuple) -> tuple[int, int]:
    """Indices of the checkpoints models A and B start on: the first TSN and the first TSM
    checkpoint found (by path) when the runs folder has both, else the first two."""
    first: dict = {}
    for i, path in enumerate(found):
        kind = sources.model_of_checkpoint(Path(path))
        if kind is not None:
            first.setdefault(kind, i)
        if len(first) == 2:
            return first[TSN], first[TSM]
    return 0, 1


def pick_checkpoint(
    col, label: str, prefix: str, slot: str, found: list[str], settings: UISettings, default: int
) -> Optional[str]:
    """The checkpoint chosen in selectbox ``label`` (widget keys ``<prefix>_ckpt_<slot>``,
    ``<prefix>_upload_<slot>``, ``<prefix>_path_<slot>``): found under the
    runs folder, uploaded (kept in the session's folder) or typed (confined to the folders the
    app may read; a relative path is read in the runs folder, as the list shows paths); None
    meanwhile."""
    options = found + [TYPED, UPLOADED]
    choice = col.selectbox(
        label,
        options,
        index=min(default, len(options) - 1),
        key=f"{prefix}_ckpt_{slot}",
        format_func=lambda p: (
            p if p in (TYPED, UPLOADED) else runs_folder.rel(Path(p), settings.runs_dir)
        ),
    )
    if choice == UPLOADED:
        mb, box = settings.max_checkpoint_mb, f"{prefix}_upload_{slot}"
        h = uploader.held_upload(
            f"Checkpoint of {_lower(label)}",
            box,
            list(uploads.CHECKPOINT_SUFFIXES),
            mb,
            f"at most {mb} MB; kept while this session lasts",
            lambda name, data: uploads.keep_checkpoint(
                name, data, settings.max_checkpoint_bytes, session.folder(settings.idle_minutes)
            ),
            uploads.UploadError,
            where=col,
            max_uploads=settings.max_uploads,
        )
        if h is not None and not h.value.is_file():  # swept with an idle session's folder
            uploader.forget(box)
            col.warning(uploader.gone(h))
            return None
        if h is not None:
            col.caption(uploader.in_use(h))
        return None if h is None else str(h.value)
    if choice != TYPED:
        return choice
    typed = col.text_input(
        f"Checkpoint path of {_lower(label)}",
        key=f"{prefix}_path_{slot}",
        placeholder="/path/to/TSM_kinetics_RGB_resnet50_..._segment8_e50.pth",
        help="a file in the runs folder (a relative path is read there) or "
        "in a folder allowed with `tsm ui --allow-root DIR`",
    )
    if not typed.strip():
        return None
    try:
        return str(access.read_typed(typed, settings))
    except access.PathRefused as e:  # named as typed
        col.error(f"{label}: {e}")
        return None


def _lower(label: str) -> str:
    return label[:1].lower() + label[1:]


def load(path: str) -> sources.LoadedRecognizer:
    """The recognizer of checkpoint file ``path`` (loaded once per server)."""
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"{p} is a folder; expected a checkpoint file (.pth)")
    if not p.is_file():
        raise ValueError(f"checkpoint not found: {p}")
    try:
        return recognizer(str(p.resolve()), p.stat().st_mtime)
    except ValueError as e:  # an upload is named as the user named it
        raise ValueError(uploads.as_given(str(e))) from None
