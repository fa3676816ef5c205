"""Annotation files: official TSM list files and Something-Something-v2 JSON labels.

TSM list file (``ops/dataset_config.py`` of the official repository)::

    <path> <num_frames> <label>        # one video a line; path relative to the root

``path`` may contain spaces (the last two fields are the numbers); blank lines and lines starting
with ``#`` are skipped. Something-Something-v2 ships ``labels.json`` (class name -> id as a
string) and ``train.json`` / ``validation.json`` / ``test.json`` (a list of
``{"id", "label", "template", "placeholders"}``; test entries hold only ``id``). The class of an
entry is its ``template`` with the ``[something]`` brackets removed.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Optional, Union

from ..io import atomic_write_text

PathLike = Union[str, os.PathLike]

__all__ = ["VideoRecord", "SSv2Record", "read_tsm_list", "write_tsm_list",
           "read_ssv2_labels", "read_ssv2", "ssv2_class_name", "ssv2_video_records"]


@dataclass(frozen=True)
class VideoRecord:
    """One video of a list file: its file or frame folder, frame count and class id."""
    path: Path
    num_frames: int
    label: int


@dataclass(frozen=True)
class SSv2Record:
    """One Something-Something-v2 entry; ``label`` is None for the unlabelled test split."""
    id: str
    path: Path
    label: Optional[int]
    template: Optional[str]
    placeholders: tuple = ()


def read_tsm_list(list_file: PathLike, root: Optional[PathLike] = None, min_frames: int = 1,
                  allow_empty: bool = False) -> list:
    """Parse a TSM list file into :class:`VideoRecord` s.

    Relative paths are joined to ``root`` (default: the list file's folder). A line that does
    not parse raises ``ValueError`` naming ``file:line``. Videos with fewer than ``min_frames``
    frames are left out (the official loader drops ``< 3`` frames in training).
    """
    list_file = Path(list_file)
    base = Path(root) if root is not None else list_file.parent
    try:
        text = list_file.read_text()
    except FileNotFoundError:
        raise FileNotFoundError(f"list file not found: {list_file}") from None
    records = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split()
        bad = f"{list_file}:{n}: expected 'path num_frames label'"
        if len(parts) < 3:
            raise ValueError(f"{bad}, got {line!r}")
        try:
            frames, label = int(parts[-2]), int(parts[-1])
        except ValueError:
            raise ValueError(f"{bad} with integer num_frames and label, got {line!r}") from None
        if frames < 1 or label < 0:
            raise ValueError(f"{bad} with num_frames >= 1 and label >= 0, got {line!r}")
        if frames < min_frames:
            continue
        path = Path(" ".join(parts[:-2]))
        records.append(VideoRecord(path if path.is_absolute() else base / path, frames, label))
    if not records and not allow_empty:
        raise ValueError(f"{list_file}: no videos listed")
    return records


def write_tsm_list(list_file: PathLike, records: Iterable[VideoRecord],
                   root: Optional[PathLike] = None) -> Path:
    """Write ``records`` as a TSM list file (paths relative to ``root``, default the list's
    folder, when they lie under it), atomically. Returns the path."""
    list_file = Path(list_file)
    base = Path(root) if root is not None else list_file.parent
    lines = []
    for r in records:
        p = Path(r.path)
        try:
            p = p.relative_to(base.resolve() if p.is_absolute() else base)
        except ValueError:
            pass
        lines.append(f"{p.as_posix()} {int(r.num_frames)} {int(r.label)}\n")
    return atomic_write_text(list_file, "".join(lines))


def _load_json(path: Path):
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise FileNotFoundError(f"JSON file not found: {path}") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}:{e.lineno}: not valid JSON ({e.msg})") from None


def read_ssv2_labels(labels_json: PathLike) -> dict:
    """``labels.json`` -> ``{class name: id}`` (ids are strings in the file, ints here)."""
    raw = _load_json(Path(labels_json))
    if not isinstance(raw, dict):
        raise ValueError(f"{labels_json}: expected an object of class name -> id, "
                         f"got {type(raw).__name__}")
    try:
        return {str(k): int(v) for k, v in raw.items()}
    except (TypeError, ValueError):
        raise ValueError(f"{labels_json}: every class id must be an integer") from None


def ssv2_class_name(template: str) -> str:
    """``"Putting [something] on [something]"`` -> ``"Putting something on something"``."""
    return template.replace("[", "").replace("]", "").strip()


def read_ssv2(split_json: PathLike, labels: Union[PathLike, dict], root: Optional[PathLike] = None,
              video_template: str = "{}.webm") -> list:
    """Entries of a Something-Something-v2 split as :class:`SSv2Record` s.

    ``labels`` is ``labels.json`` or its parsed dict. ``path`` is ``root /
    video_template.format(id)`` (root: the split file's folder). A template that names no class
    in ``labels`` raises ``ValueError`` naming the entry.
    """
    split_json = Path(split_json)
    classes = labels if isinstance(labels, dict) else read_ssv2_labels(labels)
    base = Path(root) if root is not None else split_json.parent
    raw = _load_json(split_json)
    if not isinstance(raw, list):
        raise ValueError(f"{split_json}: expected a list of entries, got {type(raw).__name__}")
    out = []
    for i, e in enumerate(raw):
        if not isinstance(e, dict) or "id" not in e:
            raise ValueError(f"{split_json}: entry {i} has no 'id': {e!r}")
        template = e.get("template")
        label = None
        if template is not None:
            name = ssv2_class_name(template)
            if name not in classes:
                raise ValueError(f"{split_json}: entry {i} (id {e['id']}): class {name!r} is not "
                                 f"in the labels ({len(classes)} classes)")
            label = classes[name]
        out.append(SSv2Record(str(e["id"]), base / video_template.format(e["id"]), label,
                              template, tuple(e.get("placeholders", ()))))
    return out


def ssv2_video_records(entries: Iterable[SSv2Record],
                       frame_counter: Optional[Callable[[Path], int]] = None) -> list:
    """:class:`VideoRecord` s for labelled SSv2 entries, counting each video's frames with
    ``frame_counter`` (default :func:`tsm_apps.data.video.count_frames`: container metadata)."""
    if frame_counter is None:
        from .video import count_frames as frame_counter
    out = []
    for e in entries:
        if e.label is None:
            raise ValueError(f"SSv2 video {e.id} ({e.path}) has no label (test split?)")
        out.append(VideoRecord(e.path, int(frame_counter(e.path)), e.label))
    return out
