"""Every form a user's videos come in, resolved to a list of :class:`VideoSource` s.

``find_sources(data)`` accepts:

* a single video file (any container PyAV reads: .mp4, .webm, .avi, .mkv, .mov, ...);
* a frame folder (images named ``<prefix><number>.<ext>``, e.g. ``img_00001.jpg``);
* a folder of videos and/or frame folders, searched recursively (sorted paths);
* a folder holding ``val.txt`` or ``test.txt`` (a list file, below);
* a list file, one video a line: ``path``, ``path num_frames`` or ``path num_frames label``
  (paths relative to the list's folder; ``#`` comments and blank lines skipped);
* a Something-Something-v2 split JSON (``[{"id": ..., "template": ...}, ...]``), videos
  ``<id>.webm`` (or frame folders ``<id>``) beside it, labels from ``labels.json`` beside it.

Frame counts absent from the input are read from the decoder (container metadata) or counted
in the folder. Checks run here, before any decoding: a missing path, a list line that does not
parse or a path in a list that does not exist raise ValueError/FileNotFoundError naming it.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, List, Optional, Union

__all__ = ["VideoSource", "find_sources", "resolve_list", "read_source_list",
           "frame_folder_template", "VIDEO_SUFFIXES", "LIST_NAMES"]

PathLike = Union[str, os.PathLike]
VIDEO_SUFFIXES = (".mp4", ".m4v", ".webm", ".avi", ".mkv", ".mov", ".mpg", ".mpeg", ".flv",
                  ".wmv", ".ogv", ".3gp", ".ts")
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp")
NOT_VIDEO = IMAGE_SUFFIXES + (".txt", ".json", ".csv", ".md", ".pth", ".pt", ".npz", ".npy",
                              ".xml", ".py", ".html", ".log", ".yaml", ".yml", ".toml")
LIST_NAMES = ("val.txt", "test.txt")
_NUMBERED = re.compile(r"^(.*?)(\d+)(\.[A-Za-z]+)$")


@dataclass(frozen=True)
class VideoSource:
    """One video: ``path`` (file or frame folder), ``name`` (its path relative to the input,
    POSIX), frame count, class label (None when unlabelled) and, for frame folders, the file
    name template and first number. ``error``: why the video cannot be read (its frame count
    is then 0); only inputs of several videos keep such entries, for the job to count."""
    path: Path
    name: str
    num_frames: int
    label: Optional[int] = None
    frame_template: Optional[str] = None
    start_index: int = 1
    error: Optional[str] = None


def frame_folder_template(folder: PathLike) -> Optional[tuple]:
    """``(template, start_index)`` of a frame folder (``img_00001.jpg`` -> ``("img_{:05d}.jpg",
    1)``), or None when the folder holds no numbered images."""
    names = sorted(p.name for p in Path(folder).iterdir()
                   if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file())
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


def _source(path: Path, name: str, frames: Optional[int], label: Optional[int],
            counter: Optional[Callable] = None, keep_unreadable: bool = True) -> VideoSource:
    """A :class:`VideoSource`; a video whose frames cannot be counted raises ValueError when
    ``keep_unreadable`` is False, else is kept with its ``error``."""
    from .video import VideoDecodeError

    try:
        return _counted(path, name, frames, label, counter)
    except VideoDecodeError as e:
        if not keep_unreadable:
            raise ValueError(f"cannot read {e}") from None
        return VideoSource(path, name, 0, label, error=e.reason)


def _counted(path: Path, name: str, frames: Optional[int], label: Optional[int],
             counter: Optional[Callable] = None) -> VideoSource:
    template = None
    if path.is_dir():
        template = frame_folder_template(path)
        if template is None:
            raise ValueError(f"{path}: a folder without numbered frame images "
                             f"(expected e.g. img_00001.jpg)")
    elif not path.is_file():
        raise FileNotFoundError(f"video not found: {path}")
    n = int(frames) if frames is not None else _count(path, template, counter)
    if n < 1:
        raise ValueError(f"{path}: no frames")
    tpl, start = template if template else (None, 1)
    return VideoSource(path, name, n, label, tpl, start)


def _parse_line(line: str, where: str) -> tuple:
    """``path [num_frames [label]]`` -> ``(path, frames or None, label or None)``."""
    parts = line.split()
    ints = []
    while len(parts) > 1 and len(ints) < 2 and re.fullmatch(r"-?\d+", parts[-1]):
        ints.insert(0, int(parts.pop()))
    frames, label = (ints + [None, None])[:2]
    if (frames is not None and frames < 1) or (label is not None and label < 0):
        raise ValueError(f"{where}: expected 'path [num_frames [label]]' with num_frames >= 1 "
                         f"and label >= 0, got {line!r}")
    return " ".join(parts), frames, label


def read_source_list(list_file: PathLike, counter: Optional[Callable] = None) -> List[VideoSource]:
    """Videos of a list file (``path``, ``path num_frames`` or ``path num_frames label``)."""
    list_file = Path(list_file)
    out = []
    for n, line in enumerate(list_file.read_text().splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        rel, frames, label = _parse_line(line.strip(), f"{list_file}:{n}")
        path = Path(rel) if Path(rel).is_absolute() else list_file.parent / rel
        if not path.exists():
            raise FileNotFoundError(f"{list_file}:{n}: video {path} not found")
        out.append(_source(path, rel, frames, label, counter))
    if not out:
        raise ValueError(f"{list_file}: no videos listed")
    return out


def _ssv2(split_json: Path, counter: Optional[Callable]) -> List[VideoSource]:
    from .lists import read_ssv2_labels, ssv2_class_name

    try:
        raw = json.loads(split_json.read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"{split_json}:{e.lineno}: not valid JSON ({e.msg})") from None
    if not isinstance(raw, list) or not all(isinstance(e, dict) and "id" in e for e in raw):
        raise ValueError(f"{split_json}: expected a Something-Something-v2 split: a list of "
                         "{'id': ..., 'template': ...} entries")
    labels_file = split_json.parent / "labels.json"
    classes = read_ssv2_labels(labels_file) if labels_file.is_file() else {}
    out = []
    for e in raw:
        vid = str(e["id"])
        path = split_json.parent / f"{vid}.webm"
        if not path.exists() and (split_json.parent / vid).is_dir():
            path = split_json.parent / vid
        label = None
        if e.get("template") is not None and classes:
            name = ssv2_class_name(e["template"])
            if name not in classes:
                raise ValueError(f"{split_json}: entry {vid}: class {name!r} not in {labels_file}")
            label = classes[name]
        out.append(_source(path, path.name, None, label, counter))
    if not out:
        raise ValueError(f"{split_json}: no entries")
    return out


def _is_video_file(path: Path) -> bool:
    suffix = path.suffix.lower()
    if suffix in VIDEO_SUFFIXES:
        return True
    if suffix in NOT_VIDEO or path.name.startswith("."):
        return False
    from .video import VideoDecodeError, count_frames
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
            out.append(_source(here, here.relative_to(root).as_posix(), None, None, counter))
            dirnames.clear()
            continue
        for f in sorted(filenames):
            p = here / f
            if _is_video_file(p):
                out.append(_source(p, p.relative_to(root).as_posix(), None, None, counter))
    return sorted(out, key=lambda s: s.name)


def resolve_list(data: PathLike) -> Path:
    """``data`` as a path, or the list it holds (the first of ``LIST_NAMES``) where it is a
    folder with one; raises ``FileNotFoundError`` naming the path where nothing is there."""
    p = Path(data)
    if not p.exists():
        raise FileNotFoundError(f"data not found: {p} (expected a video, a folder of videos or "
                                "frame folders, a list file or a Something-Something JSON)")
    lists = [p / n for n in LIST_NAMES if (p / n).is_file()] if p.is_dir() else []
    return lists[0] if lists else p


def find_sources(data: PathLike, counter: Optional[Callable] = None) -> List[VideoSource]:
    """The videos of ``data`` (see the module docstring for the forms), in a stable order.

    ``counter(path) -> int`` replaces the decoder's frame count (tests, caching).
    """
    p = resolve_list(data)
    if p.is_dir():
        if frame_folder_template(p) is not None:
            return [_source(p, p.name, None, None, counter, keep_unreadable=False)]
        found = _walk(p, counter)
        if not found:
            raise ValueError(f"{p}: no videos found (searched recursively for video files "
                             f"{', '.join(VIDEO_SUFFIXES[:6])}, ... and frame folders)")
        return found
    if p.suffix.lower() == ".json":
        return _ssv2(p, counter)
    if p.suffix.lower() in (".txt", ".lst", ".list", ".csv"):
        return read_source_list(p, counter)
    if not _is_video_file(p):
        raise ValueError(f"{p}: not a video PyAV can read, a list file (.txt) or a "
                         "Something-Something JSON (.json)")
    return [_source(p, p.name, None, None, counter, keep_unreadable=False)]
