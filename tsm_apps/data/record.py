"""The one record of a video: :class:`VideoSource` -- a video file or frame folder, its frame
count, its class label and, for a frame folder, how its images are named.

Every reader of videos gives these records: list files and Something-Something JSON
(:mod:`tsm_apps.data.lists`), folders and single files (:mod:`tsm_apps.data.sources`,
:meth:`VideoSource.of`); the data sets, the clip pipeline, ``tsm test`` and dissection take
them. Frame counts absent from the input are read from the decoder (container metadata) or
counted in the folder, before any frame is decoded.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Union

__all__ = ["VideoSource", "frame_folder_template", "counted_source", "IMAGE_SUFFIXES"]

PathLike = Union[str, os.PathLike]
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp")
_NUMBERED = re.compile(r"^(.*?)(\d+)(\.[A-Za-z]+)$")


@dataclass(frozen=True)
class VideoSource:
    """One video: ``path`` (file or frame folder), frame count, class ``label`` (None when
    unlabelled), ``name`` (its path as the input names it, POSIX; ``""`` when the input gave
    none), for frame folders the file name template and first number (None: the reader's
    default, ``img_{:05d}.jpg`` from 1), and ``error``: why the video cannot be read (its frame
    count is then 0; only inputs of several videos keep such entries, for the job to count)."""

    path: Path
    num_frames: int
    label: Optional[int] = None
    name: str = ""
    frame_template: Optional[str] = None
    start_index: int = 1
    error: Optional[str] = None

    @classmethod
    def of(cls, path: PathLike, counter: Optional[Callable] = None) -> "VideoSource":
        """One video file or frame folder, its frames counted; ValueError / FileNotFoundError
        naming ``path`` when it cannot be read."""
        p = Path(path)
        return counted_source(p, p.name, counter=counter, keep_unreadable=False)


def frame_folder_template(folder: PathLike) -> Optional[tuple]:
    """``(template, start_index)`` of a frame folder (``img_00001.jpg`` -> ``("img_{:05d}.jpg",
    1)``), or None when the folder holds no numbered images."""
    names = sorted(
        p.name for p in Path(folder).iterdir() if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file()
    )
    for name in names:
        m = _NUMBERED.match(name)
        if m:
            prefix, digits, ext = m.groups()
            same = [n for n in names if n.startswith(prefix) and n.endswith(ext)]
            start = min(int(_NUMBERED.match(n).group(2)) for n in same if _NUMBERED.match(n))
            width = len(digits)
            return f"{prefix}{{:0{width}d}}{ext}", start
    return None


def _count(path: Path, template: Optional[tuple], counter: Optional[Callable]) -> int:
    from .video import count_frames

    if counter is not None:
        return int(counter(path))
    if template is not None:
        return count_frames(path, frame_template=template[0], start_index=template[1])
    return count_frames(path)


def counted_source(
    path: Path,
    name: str,
    frames: Optional[int] = None,
    label: Optional[int] = None,
    counter: Optional[Callable] = None,
    keep_unreadable: bool = True,
) -> VideoSource:
    """The record of ``path`` (``frames``: its count when the input states it; ``counter(path)
    -> int`` replaces the decoder's count). A video whose frames cannot be counted raises
    ValueError when ``keep_unreadable`` is False, else is kept with its ``error``."""
    from .decoder import VideoDecodeError

    try:
        return _counted(path, name, frames, label, counter)
    except VideoDecodeError as e:
        if not keep_unreadable:
            raise ValueError(f"cannot read {e}") from None
        return VideoSource(path, 0, label, name, error=e.reason)


def _counted(
    path: Path,
    name: str,
    frames: Optional[int],
    label: Optional[int],
    counter: Optional[Callable] = None,
) -> VideoSource:
    template = None
    if path.is_dir():
        template = frame_folder_template(path)
        if template is None:
            raise ValueError(
                f"{path}: a folder without numbered frame images (expected e.g. img_00001.jpg)"
            )
    elif not path.is_file():
        raise FileNotFoundError(f"video not found: {path}")
    n = int(frames) if frames is not None else _count(path, template, counter)
    if n < 1:
        raise ValueError(f"{path}: no frames")
    tpl, start = template if template else (None, 1)
    return VideoSource(path, n, label, name, tpl, start)
