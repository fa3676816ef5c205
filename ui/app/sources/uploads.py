"""Uploaded files: size check, safe file names, a temporary copy that is always removed,
decoding within the app's limits, and checkpoints kept in the session's own folder.

The app keeps an uploaded video in the session's folder (:mod:`ui.app.session`) while the
session lasts, so the models read the file's own frames, and decodes it once into memory
(within :class:`ui.app.settings.DecodeLimits`) for display; an uploaded checkpoint is kept there
too, so the models can be loaded from a path. :func:`decode_upload` decodes an upload from a
temporary copy that is deleted before it returns.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import tempfile
import unicodedata
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

from tsm_apps.data.decoder import read_header
from tsm_apps.io import atomic_write_bytes

from ..settings import DecodeLimits, VideoLimits
from ..text import literal
from .base import Decoded, VideoDecodeError, read_video

CHECKPOINT_SUFFIXES = ("pth", "pt", "tar", "ckpt")
MAX_NAME = 120
TEMP_PREFIX = "tsm_ui_upload_"


class UploadError(ValueError):
    """An upload the app cannot use; the message is shown to the user as is."""


def check_size(name: str, size: int, max_bytes: int) -> None:
    """Raise :class:`UploadError` when ``size`` (bytes) exceeds ``max_bytes`` or is zero (the
    name shown literally, :func:`ui.app.text.literal`)."""
    if size <= 0:
        raise UploadError(f"{literal(name)} is empty.")
    if size > max_bytes:
        raise UploadError(
            f"{literal(name)} is {size / 2**20:.1f} MB; the limit is {max_bytes / 2**20:.0f} MB."
        )


def safe_name(name: str, default: str) -> str:
    """A file name for the upload named ``name``: its last path component (``/`` or ``\\``),
    letters, digits and ``._-+()`` only (others become ``_``), at most :data:`MAX_NAME`
    characters; ``default`` for a name that would be empty, ``.``, ``..`` or hidden."""
    base = re.split(r"[/\\]", unicodedata.normalize("NFKC", str(name)))[-1]
    base = re.sub(r"[^A-Za-z0-9._+()-]", "_", base).strip("_ ")
    if not base or base.startswith(".") or set(base) <= {".", "_"}:
        return default
    if len(base) > MAX_NAME:
        stem, dot, suffix = base.rpartition(".")
        base = (
            (stem[: MAX_NAME - len(suffix) - 1] + "." + suffix)
            if dot and len(suffix) < 10
            else base[:MAX_NAME]
        )
    return base


@contextmanager
def temporary_copy(name: str, data: bytes, folder: Optional[Path] = None) -> Iterator[Path]:
    """Write ``data`` as :func:`safe_name` ``(name)`` in a new private folder (inside ``folder``
    when given); the folder is removed on exit."""
    tmp = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX, dir=folder))
    try:
        path = tmp / safe_name(name, "upload")
        path.write_bytes(data)
        yield path
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def decode_upload(
    name: str, data: bytes, max_bytes: int, limits: DecodeLimits, folder: Optional[Path] = None
) -> "Decoded":
    """The first frames of an uploaded video at the working size (``limits``) and its length.

    Raises :class:`UploadError` with a user-facing message (the file's name and what is wrong,
    never a temporary path or an error number) for empty, too large or undecodable files; the
    temporary copy is gone when this returns or raises.
    """
    check_size(name, len(data), max_bytes)
    with temporary_copy(name, data, folder) as path:
        try:
            return read_video(path, limits.max_frames, limits)
        except (VideoDecodeError, ValueError, OSError) as e:
            raise UploadError(
                f"{literal(name)} is not a video this app can decode ({_reason(e, path)})."
            ) from None


def _reason(err: Exception, path: Path) -> str:
    """The decoder's reason without the temporary path and without ``[Errno N]``."""
    text = getattr(err, "reason", None) or str(err)
    text = text.replace(str(path), "the file").replace(str(path.parent), "")
    text = re.sub(r"\[Errno -?\d+\]\s*", "", text)
    return text.strip(" :") or "unreadable data"


def leftover_uploads(root: Optional[Path] = None) -> list[str]:
    """Temporary upload folders that still exist in ``root`` (default: the system's temporary
    folder) — for tests: should always be empty."""
    root = Path(root or tempfile.gettempdir())
    return sorted(p.name for p in root.glob(f"{TEMP_PREFIX}*"))


def keep_checkpoint(name: str, data: bytes, max_bytes: int, folder: Path) -> Path:
    """An uploaded checkpoint saved once per content as ``<folder>/<sha256 prefix>/<safe
    name>`` (the original file name is kept where safe, since it can name the official label
    set). Raises :class:`UploadError` for an empty or too large file."""
    return _keep(name, data, max_bytes, folder, "upload.pth")


def _keep(name: str, data: bytes, max_bytes: int, folder: Path, default: str) -> Path:
    """``data`` saved once per content as ``<folder>/<sha256 prefix>/<safe name>``."""
    check_size(name, len(data), max_bytes)
    digest = hashlib.sha256(data).hexdigest()[:16]
    path = Path(folder) / digest / safe_name(name, default)
    if not path.is_file():
        atomic_write_bytes(path, data)
    _GIVEN_NAMES.update({str(path): name, str(path.resolve()): name})
    return path


# path of a kept upload (as kept and resolved) -> the name the user gave the file
_GIVEN_NAMES: dict[str, str] = {}


def as_given(text: str) -> str:
    """``text`` (an error line) with the server's path of every kept upload replaced by the
    name the user gave the file, shown literally (:func:`ui.app.text.literal`); any other path
    in the upload area (a folder, another session's file) becomes "an uploaded file": the page
    never shows a temporary path or a session id."""
    for kept, name in sorted(_GIVEN_NAMES.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(kept, literal(name))
    return _UPLOAD_PATH.sub("an uploaded file", text)


# a path in the server's upload area (ui.app.session.PREFIX) or a temporary copy (TEMP_PREFIX)
_UPLOAD_PATH = re.compile(r"[^\s'\"`]*tsm_ui_upload[^\s'\"`]*")


def given_name(path: Path | str) -> Optional[str]:
    """The name the user gave the kept upload at ``path``; None for any other file."""
    return _GIVEN_NAMES.get(str(path)) or _GIVEN_NAMES.get(str(Path(path).resolve()))


def keep_video(
    name: str,
    data: bytes,
    max_bytes: int,
    limits: DecodeLimits,
    folder: Path,
    accept: VideoLimits = VideoLimits(),
) -> tuple:
    """``(Decoded, path)``: an uploaded video kept in the session's folder ``folder`` as
    :func:`keep_checkpoint` keeps checkpoints -- so the models read the file's own frames and
    answer as ``tsm test`` does at any working size -- and its first frames decoded at the
    working size (``limits``) for display. Before any frame is decoded, its header is checked
    against ``accept`` (frame size, frame count). Raises :class:`UploadError` (the file's name,
    never the kept path) for empty, too large, oversized or undecodable files, which are not
    kept."""
    path = _keep(name, data, max_bytes, folder, "upload.mp4")
    try:
        header = read_header(path)
        too_big = accept.refusal(header.width, header.height, header.frames)
        if too_big is None:
            return read_video(path, limits.max_frames, limits), path
    except (VideoDecodeError, ValueError, OSError) as e:
        shutil.rmtree(path.parent, ignore_errors=True)
        raise UploadError(
            f"{literal(name)} is not a video this app can decode ({_reason(e, path)})."
        ) from None
    shutil.rmtree(path.parent, ignore_errors=True)
    raise UploadError(
        f"{literal(name)} ({len(data) / 2**20:.1f} MB) has {too_big} "
        "(`tsm ui --max-resolution WxH --max-video-frames N`)."
    )
