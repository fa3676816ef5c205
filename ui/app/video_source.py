"""Choosing the video a view works on: a synthetic VID val snippet, a video under the runs
folder, or an upload. Returns the decoded frames and a stable key for caching results."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np
import streamlit as st

from . import runs, sources
from .settings import UISettings
from .upload import UploadError, decode_upload

SNIPPET, RUNS_VIDEO, UPLOAD = "VID val snippet", "Video in the runs folder", "Upload a video"


@dataclass(frozen=True)
class ChosenVideo:
    """Decoded frames ``(T, H, W, 3)`` uint8 (the first ``len(frames)`` of ``total``), the cache
    key naming their source, a label, and the snippet folder or file it came from (None for an
    upload)."""
    frames: np.ndarray
    key: str
    label: str
    total: int = 0
    path: Optional[Path] = None

    @property
    def cut(self) -> bool:
        return self.total > len(self.frames)

    def limit_note(self, limit: int) -> str:
        """What the frame limit did, for a caption."""
        n = len(self.frames)
        if self.cut:
            return (f"the first {n} of the video's {self.total} frames (frame limit {limit}; "
                    "`tsm ui --max-frames N` changes it)")
        return f"all {n} frames of the video (frame limit {limit})"


@st.cache_data(show_spinner="Listing videos...", ttl=60)
def _listing(root: str) -> tuple[list[str], list[str]]:
    base = Path(root)
    return ([str(p) for p in runs.find_vid_snippets(base)],
            [str(p) for p in runs.find_videos(base)])


# cache_resource, not cache_data: the frames are shared read-only, never copied per rerun
@st.cache_resource(show_spinner="Decoding video...", max_entries=4)
def _frames_of(path: str, mtime: float, max_frames: int) -> sources.Decoded:
    return sources.read_video(Path(path), max_frames)


@st.cache_resource(show_spinner="Decoding upload...", max_entries=2)
def _frames_of_upload(name: str, digest: str, data: bytes, max_bytes: int,
                      max_frames: int) -> sources.Decoded:
    return decode_upload(name, data, max_bytes, max_frames)


def _pick_path(label: str, paths: list[str], root: Path, key: str) -> Optional[str]:
    return st.selectbox(label, paths, format_func=lambda p: runs.rel(Path(p), root), key=key)


def choose_video(settings: UISettings, key: str) -> Optional[ChosenVideo]:
    """Draw the video chooser; ``None`` (with a message on the page) when nothing usable."""
    root = settings.runs_dir
    snippets, videos = _listing(str(root))
    kinds = [k for k, have in ((SNIPPET, snippets), (RUNS_VIDEO, videos), (UPLOAD, True)) if have]
    kind = st.radio("Video", kinds, horizontal=True, key=f"{key}_kind")
    if kind == UPLOAD:
        up = st.file_uploader("Video file", type=[s.lstrip(".") for s in runs.VIDEO_SUFFIXES],
                              key=f"{key}_upload",
                              help=f"at most {settings.max_upload_mb:g} MB; the first "
                                   f"{settings.max_frames} frames are used")
        if up is None:
            st.info("Choose a video file to upload.")
            return None
        data = up.getvalue()
        digest = hashlib.sha1(data).hexdigest()[:16]
        try:
            got = _frames_of_upload(up.name, digest, data, settings.max_upload_bytes,
                                    settings.max_frames)
        except UploadError as e:
            st.error(str(e))
            return None
        return ChosenVideo(got.frames, f"upload:{digest}:{settings.max_frames}", up.name,
                           got.total)
    path = _pick_path("Snippet" if kind == SNIPPET else "File",
                      snippets if kind == SNIPPET else videos, root, f"{key}_path")
    if path is None:
        return None
    try:
        got = _frames_of(path, Path(path).stat().st_mtime, settings.max_frames)
    except (sources.VideoDecodeError, OSError, ValueError) as e:
        st.error(f"Cannot read `{runs.rel(Path(path), root)}`: {e}")
        return None
    return ChosenVideo(got.frames, f"file:{path}:{settings.max_frames}", runs.rel(Path(path), root),
                       got.total, Path(path))
