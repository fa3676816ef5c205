"""Choosing the video a view works on: a synthetic VID val snippet, a video under the runs
folder, or an upload. Returns the frames decoded within the app's limits (the page says what the
limits did) and a stable key for caching results.

Videos of the runs folder are decoded once per server (shared read-only); an upload is kept in
its session's folder and decoded into its session's state, so both go when the session ends.
The models read a video's file (the upload's kept copy) through the one clip pipeline, so their
answer is ``tsm test``'s at any working size; the decoded frames are for display.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import streamlit as st

from .. import session, sources
from ..settings import DecodeLimits, UISettings
from ..sources import runs_folder
from ..sources.uploads import UploadError, keep_video
from . import uploader

SNIPPET, RUNS_VIDEO, UPLOAD = "VID val snippet", "Video in the runs folder", "Upload a video"
LIMIT_OPTIONS = "`tsm ui --max-frames N --frame-size PX --max-decoded-mp MP` changes them"


@dataclass(frozen=True, kw_only=True)
class ChosenVideo(sources.Decoded):
    """A video's decoded frames (:class:`~ui.app.sources.base.Decoded`: the first
    ``len(frames)`` of ``total`` at the working size, and the video's own frame size), the cache
    key naming their source, a label, and the snippet folder or file they came from (an
    upload's kept copy for an upload)."""

    key: str
    label: str
    path: Optional[Path] = None

    def limit_note(self, limits: DecodeLimits) -> str:
        """What the limits did, for a caption."""
        n, (h, w) = len(self.frames), self.frames.shape[1:3]
        which = (
            f"the first {n} of the video's {self.total} frames"
            if self.cut
            else f"all {n} frames of the video"
        )
        size = f"{w}x{h}"
        if self.scale != 1.0:
            size = (
                f"{w}x{h}, downscaled from {self.source_size[0]}x{self.source_size[1]} to "
                f"the working resolution"
            )
        return (
            f"{which} at {size} (limits: {limits.max_frames} frames, shorter side "
            f"{limits.short_side} px, {limits.max_pixels / 1e6:g} megapixels decoded; "
            f"{LIMIT_OPTIONS})"
        )


@st.cache_data(show_spinner="Listing videos...", ttl=60)
def _listing(root: str) -> tuple[list[str], list[str]]:
    base = Path(root)
    return (
        [str(p) for p in runs_folder.find_vid_snippets(base)],
        [str(p) for p in runs_folder.find_videos(base)],
    )


# cache_resource, not cache_data: the frames are shared read-only, never copied per rerun
@st.cache_resource(show_spinner="Decoding video...", max_entries=4)
def _frames_of(path: str, mtime: float, limits: DecodeLimits) -> sources.Decoded:
    return sources.read_video(Path(path), limits.max_frames, limits)


def _upload(settings: UISettings, key: str) -> Optional[ChosenVideo]:
    mb = settings.max_upload_mb

    def keep(name: str, data: bytes) -> tuple:
        with st.spinner("Decoding upload..."):
            return hashlib.sha1(data).hexdigest()[:16], keep_video(
                name,
                data,
                settings.max_upload_bytes,
                settings.limits,
                session.folder(settings.idle_minutes),
                settings.video_limits,
            )

    box = f"{key}_upload"
    h = uploader.held_upload(
        "Video file",
        box,
        [s.lstrip(".") for s in runs_folder.VIDEO_SUFFIXES],
        mb,
        f"at most {mb} MB and {settings.max_resolution[0]}x{settings.max_resolution[1]} "
        "pixels; decoded within the limits below",
        keep,
        UploadError,
        max_uploads=settings.max_uploads,
    )
    if h is None:
        st.info("Choose a video file to upload.")
        return None
    digest, (decoded, path) = h.value
    if not path.is_file():  # swept with an idle session's folder
        uploader.forget(box)
        st.warning(uploader.gone(h))
        return None
    st.caption(uploader.in_use(h))
    return ChosenVideo(
        decoded.frames,
        decoded.total,
        decoded.source_size,
        key=f"upload:{digest}:{settings.limits}",
        label=h.name,
        path=path,
    )


def choose_video(settings: UISettings, key: str) -> Optional[ChosenVideo]:
    """Draw the video chooser; ``None`` (with a message on the page) when nothing usable."""
    root = settings.runs_dir
    snippets, videos = _listing(str(root))
    kinds = [k for k, have in ((SNIPPET, snippets), (RUNS_VIDEO, videos), (UPLOAD, True)) if have]
    kind = st.radio("Video", kinds, horizontal=True, key=f"{key}_kind")
    if kind == UPLOAD:
        return _upload(settings, key)
    paths = snippets if kind == SNIPPET else videos
    path = st.selectbox(
        "Snippet" if kind == SNIPPET else "File",
        paths,
        key=f"{key}_path",
        format_func=lambda p: runs_folder.rel(Path(p), root),
    )
    if path is None:
        return None
    try:
        got = _frames_of(path, Path(path).stat().st_mtime, settings.limits)
    except (sources.VideoDecodeError, OSError, ValueError) as e:
        st.error(
            f"Cannot read `{runs_folder.rel(Path(path), root)}`: {getattr(e, 'reason', None) or e}"
        )
        return None
    return ChosenVideo(
        got.frames,
        got.total,
        got.source_size,
        key=f"file:{path}:{settings.limits}",
        label=runs_folder.rel(Path(path), root),
        path=Path(path),
    )
