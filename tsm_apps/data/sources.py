"""Every form a user's videos come in, resolved to a list of
:class:`~tsm_apps.data.record.VideoSource` records.

``find_sources(data)`` accepts:

* a single video file (any container PyAV reads: .mp4, .webm, .avi, .mkv, .mov, ...);
* a frame folder (images named ``<prefix><number>.<ext>``, e.g. ``img_00001.jpg``);
* a folder of videos and/or frame folders, searched recursively (sorted paths);
* a folder holding ``val.txt`` or ``test.txt`` (a list file, below);
* a list file, one video a line: ``path``, ``path num_frames`` or ``path num_frames label``
  (paths relative to the list's folder; ``#`` comments and blank lines skipped;
  :func:`tsm_apps.data.lists.read_video_list`);
* a Something-Something-v2 split JSON (``[{"id": ..., "template": ...}, ...]``), videos
  ``<id>.webm`` (or frame folders ``<id>``) beside it, labels from ``labels.json`` beside it.

Frame counts absent from the input are read from the decoder (container metadata) or counted
in the folder. Checks run here, before any decoding: a missing path, a list line that does not
parse or a path in a list that does not exist raise ValueError/FileNotFoundError naming it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, List, Optional, Union

from .lists import read_ssv2, read_video_list
from .record import IMAGE_SUFFIXES, VideoSource, counted_source, frame_folder_template

__all__ = ["find_sources", "resolve_list", "VIDEO_SUFFIXES", "LIST_NAMES"]

PathLike = Union[str, os.PathLike]
VIDEO_SUFFIXES = (
    ".mp4",
    ".m4v",
    ".webm",
    ".avi",
    ".mkv",
    ".mov",
    ".mpg",
    ".mpeg",
    ".flv",
    ".wmv",
    ".ogv",
    ".3gp",
    ".ts",
)
NOT_VIDEO = IMAGE_SUFFIXES + (
    ".txt",
    ".json",
    ".csv",
    ".md",
    ".pth",
    ".pt",
    ".npz",
    ".npy",
    ".xml",
    ".py",
    ".html",
    ".log",
    ".yaml",
    ".yml",
    ".toml",
)
LIST_NAMES = ("val.txt", "test.txt")


def _ssv2(split_json: Path, counter: Optional[Callable]) -> List[VideoSource]:
    """The videos of an SSv2 split: ``<id>.webm`` or the frame folder ``<id>`` beside it,
    labelled when ``labels.json`` is there too."""
    labels_file = split_json.parent / "labels.json"
    out = []
    for e in read_ssv2(split_json, labels_file if labels_file.is_file() else None):
        path = e.path
        if not path.exists() and (split_json.parent / e.id).is_dir():
            path = split_json.parent / e.id
        out.append(counted_source(path, path.name, None, e.label, counter))
    if not out:
        raise ValueError(f"{split_json}: no entries")
    return out


def _is_video_file(path: Path) -> bool:
    suffix = path.suffix.lower()
    if suffix in VIDEO_SUFFIXES:
        return True
    if suffix in NOT_VIDEO or path.name.startswith("."):
        return False
    from .decoder import VideoDecodeError
    from .video import count_frames

    try:  # unknown suffix: ask the demuxer (header only)
        return count_frames(path) > 0
    except (VideoDecodeError, OSError, ValueError):
        return False


def _walk(root: Path, counter: Optional[Callable]) -> List[VideoSource]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        here = Path(dirpath)
        if here != root and frame_folder_template(here) is not None:
            out.append(counted_source(here, here.relative_to(root).as_posix(), counter=counter))
            dirnames.clear()
            continue
        for f in sorted(filenames):
            p = here / f
            if _is_video_file(p):
                out.append(counted_source(p, p.relative_to(root).as_posix(), counter=counter))
    return sorted(out, key=lambda s: s.name)


def resolve_list(data: PathLike) -> Path:
    """``data`` as a path, or the list it holds (the first of ``LIST_NAMES``) where it is a
    folder with one; raises ``FileNotFoundError`` naming the path where nothing is there."""
    p = Path(data)
    if not p.exists():
        raise FileNotFoundError(
            f"data not found: {p} (expected a video, a folder of videos or "
            "frame folders, a list file or a Something-Something JSON)"
        )
    lists = [p / n for n in LIST_NAMES if (p / n).is_file()] if p.is_dir() else []
    return lists[0] if lists else p


def find_sources(data: PathLike, counter: Optional[Callable] = None) -> List[VideoSource]:
    """The videos of ``data`` (see the module docstring for the forms), in a stable order.

    ``counter(path) -> int`` replaces the decoder's frame count (tests, caching).
    """
    p = resolve_list(data)
    if p.is_dir():
        if frame_folder_template(p) is not None:
            return [VideoSource.of(p, counter)]
        found = _walk(p, counter)
        if not found:
            raise ValueError(
                f"{p}: no videos found (searched recursively for video files "
                f"{', '.join(VIDEO_SUFFIXES[:6])}, ... and frame folders)"
            )
        return found
    if p.suffix.lower() == ".json":
        return _ssv2(p, counter)
    if p.suffix.lower() in (".txt", ".lst", ".list", ".csv"):
        return read_video_list(p, counter)
    if not _is_video_file(p):
        raise ValueError(
            f"{p}: not a video PyAV can read, a list file (.txt) or a "
            "Something-Something JSON (.json)"
        )
    return [VideoSource.of(p, counter)]
