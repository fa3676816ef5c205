"""Uploaded videos: size check, a temporary file that is always removed, decode check.

The upload is decoded once into memory (at most ``max_frames`` frames) and its temporary file
deleted before the page goes on, so nothing the user uploads stays on disk.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from tsm_apps.io import atomic_write_bytes

from . import sources


class UploadError(ValueError):
    """An upload the app cannot use; the message is shown to the user as is."""


def check_size(name: str, size: int, max_bytes: int) -> None:
    """Raise :class:`UploadError` when ``size`` (bytes) exceeds ``max_bytes`` or is zero."""
    if size <= 0:
        raise UploadError(f"'{name}' is empty.")
    if size > max_bytes:
        raise UploadError(f"'{name}' is {size / 2**20:.1f} MB; the limit is "
                          f"{max_bytes / 2**20:.1f} MB (start `tsm ui --max-upload-mb N` "
                          "to change it).")


@contextmanager
def temporary_copy(name: str, data: bytes) -> Iterator[Path]:
    """Write ``data`` to a private temporary folder as ``name``; the folder is removed on exit."""
    folder = tempfile.mkdtemp(prefix="tsm_ui_upload_")
    try:
        path = Path(folder) / (Path(name).name or "upload")
        with open(path, "wb") as f:
            f.write(data)
        yield path
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def decode_upload(name: str, data: bytes, max_bytes: int, max_frames: int) -> "sources.Decoded":
    """Frames uint8 ``(T, H, W, 3)`` of an uploaded video (the first ``max_frames``) and its
    length.

    Raises :class:`UploadError` with a user-facing message for empty, too large or
    undecodable files; the temporary copy is gone when this returns or raises.
    """
    check_size(name, len(data), max_bytes)
    with temporary_copy(name, data) as path:
        try:
            return sources.read_video(path, max_frames)
        except (sources.VideoDecodeError, ValueError, OSError) as e:
            reason = getattr(e, "reason", None) or str(e)
            raise UploadError(f"'{name}' is not a video this app can decode ({reason}).") from None


def leftover_uploads() -> list[str]:
    """Temporary upload folders that still exist (for tests: should always be empty)."""
    root = tempfile.gettempdir()
    return sorted(n for n in os.listdir(root) if n.startswith("tsm_ui_upload_"))


CHECKPOINT_SUFFIXES = ("pth", "pt", "tar", "ckpt")


def keep_checkpoint(name: str, data: bytes, max_bytes: int) -> Path:
    """An uploaded checkpoint saved once per content under ``<tmp>/tsm_ui_checkpoints/<sha256
    prefix>/<name>`` (kept while the machine keeps its temp folder, so the app's caches can key
    on its path; the original file name is kept, since it can name the official label set).
    Raises :class:`UploadError` for an empty or too large file."""
    check_size(name, len(data), max_bytes)
    digest = hashlib.sha256(data).hexdigest()[:16]
    folder = Path(tempfile.gettempdir()) / "tsm_ui_checkpoints" / digest
    path = folder / (Path(name).name or "upload.pth")
    if not path.is_file():
        atomic_write_bytes(path, data)
    return path

