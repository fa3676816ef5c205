"""Annotation files read into :class:`~tsm_apps.data.record.VideoSource` records: list files
and Something-Something-v2 JSON labels (one line parser, one JSON reader).

TSM list file (``ops/dataset_config.py`` of the official repository)::

    <path> <num_frames> <label>        # one video a line; path relative to the root

``path`` may contain spaces (the last two fields are the numbers); blank lines and lines starting
with ``#`` are skipped. ``tsm test`` and dissection also read lists whose lines omit the label or
both numbers (:func:`read_video_list`). Something-Something-v2 ships ``labels.json`` (class
name -> id as a string) and ``train.json`` / ``validation.json`` / ``test.json`` (a list of
``{"id", "label", "template", "placeholders"}``; test entries hold only ``id``). The class of an
entry is its ``template`` with the ``[something]`` brackets removed.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, List, Optional, Union

from ..io import atomic_write_text, read_json
from .record import VideoSource, counted_source

PathLike = Union[str, os.PathLike]

__all__ = [
    "SSv2Record",
    "parse_list_line",
    "read_tsm_list",
    "read_video_list",
    "write_tsm_list",
    "read_ssv2_labels",
    "ssv2_labels",
    "read_ssv2",
    "ssv2_class_name",
    "ssv2_video_records",
]


@dataclass(frozen=True)
class SSv2Record:
    """One Something-Something-v2 entry; ``label`` is None for the unlabelled test split."""

    id: str
    path: Path
    label: Optional[int]
    template: Optional[str]
    placeholders: tuple = ()


def _lines(list_file: Path) -> Iterator[tuple]:
    """``(line number, stripped line)`` of a list file, blank and ``#`` lines skipped."""
    try:
        text = list_file.read_text()
    except FileNotFoundError:
        raise FileNotFoundError(f"list file not found: {list_file}") from None
    for n, line in enumerate(text.splitlines(), start=1):
        if line.strip() and not line.lstrip().startswith("#"):
            yield n, line.strip()


def parse_list_line(line: str, where: str, complete: bool = True) -> tuple:
    """``(path, num_frames, label)`` of one list line; ``complete``: the TSM list's ``path
    num_frames label``, else ``path [num_frames [label]]`` (absent fields None). ValueError
    naming ``where`` (``file:line``) and the expected form."""
    parts = line.split()
    if complete:
        bad = f"{where}: expected 'path num_frames label'"
        if len(parts) < 3:
            raise ValueError(f"{bad}, got {line!r}")
        try:
            frames, label = int(parts[-2]), int(parts[-1])
        except ValueError:
            raise ValueError(f"{bad} with integer num_frames and label, got {line!r}") from None
        if frames < 1 or label < 0:
            raise ValueError(f"{bad} with num_frames >= 1 and label >= 0, got {line!r}")
        return " ".join(parts[:-2]), frames, label
    ints: list = []
    while len(parts) > 1 and len(ints) < 2 and re.fullmatch(r"-?\d+", parts[-1]):
        ints.insert(0, int(parts.pop()))
    frames, label = (ints + [None, None])[:2]
    if (frames is not None and frames < 1) or (label is not None and label < 0):
        raise ValueError(
            f"{where}: expected 'path [num_frames [label]]' with num_frames >= 1 "
            f"and label >= 0, got {line!r}"
        )
    return " ".join(parts), frames, label


def read_tsm_list(
    list_file: PathLike,
    root: Optional[PathLike] = None,
    min_frames: int = 1,
    allow_empty: bool = False,
) -> List[VideoSource]:
    """Parse a TSM list file (every line ``path num_frames label``) into :class:`VideoSource` s
    (no file is opened: paths are checked where they are read).

    Relative paths are joined to ``root`` (default: the list file's folder). A line that does
    not parse raises ``ValueError`` naming ``file:line``. Videos with fewer than ``min_frames``
    frames are left out (the official loader drops ``< 3`` frames in training).
    """
    list_file = Path(list_file)
    base = Path(root) if root is not None else list_file.parent
    records = []
    for n, line in _lines(list_file):
        rel, frames, label = parse_list_line(line, f"{list_file}:{n}")
        if frames < min_frames:
            continue
        path = Path(rel)
        records.append(VideoSource(path if path.is_absolute() else base / path, frames, label))
    if not records and not allow_empty:
        raise ValueError(f"{list_file}: no videos listed")
    return records


def read_video_list(list_file: PathLike, counter: Optional[Callable] = None) -> List[VideoSource]:
    """Videos of a list file whose lines are ``path``, ``path num_frames`` or ``path num_frames
    label`` (paths relative to the list's folder), each checked to exist, absent frame counts
    read from the decoder (``counter(path)`` replaces it); ``name``: the path as listed."""
    list_file = Path(list_file)
    out = []
    for n, line in _lines(list_file):
        rel, frames, label = parse_list_line(line, f"{list_file}:{n}", complete=False)
        path = Path(rel) if Path(rel).is_absolute() else list_file.parent / rel
        if not path.exists():
            raise FileNotFoundError(f"{list_file}:{n}: video {path} not found")
        out.append(counted_source(path, rel, frames, label, counter))
    if not out:
        raise ValueError(f"{list_file}: no videos listed")
    return out


def write_tsm_list(
    list_file: PathLike, records: Iterable[VideoSource], root: Optional[PathLike] = None
) -> Path:
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


def ssv2_labels(raw: Any, where: PathLike) -> dict:
    """Something-Something's ``{class name: id}`` object (ids strings or ints) as
    ``{name: int id}``; ValueError naming ``where`` for anything else."""
    if not isinstance(raw, dict):
        raise ValueError(
            f"{where}: expected an object of class name -> id, got {type(raw).__name__}"
        )
    try:
        return {str(k): int(v) for k, v in raw.items()}
    except (TypeError, ValueError):
        raise ValueError(f"{where}: every class id must be an integer") from None


def read_ssv2_labels(labels_json: PathLike) -> dict:
    """``labels.json`` -> ``{class name: id}`` (ids are strings in the file, ints here)."""
    return ssv2_labels(read_json(Path(labels_json)), labels_json)


def ssv2_class_name(template: str) -> str:
    """``"Putting [something] on [something]"`` -> ``"Putting something on something"``."""
    return template.replace("[", "").replace("]", "").strip()


def read_ssv2(
    split_json: PathLike,
    labels: Union[PathLike, dict, None],
    root: Optional[PathLike] = None,
    video_template: str = "{}.webm",
) -> list:
    """Entries of a Something-Something-v2 split as :class:`SSv2Record` s.

    ``labels`` is ``labels.json``, its parsed dict, or None (every entry unlabelled). ``path`` is
    ``root / video_template.format(id)`` (root: the split file's folder). A template that names
    no class in ``labels`` raises ``ValueError`` naming the entry.
    """
    split_json = Path(split_json)
    classes = labels if isinstance(labels, dict) or labels is None else read_ssv2_labels(labels)
    base = Path(root) if root is not None else split_json.parent
    raw = read_json(split_json)
    if not isinstance(raw, list):
        raise ValueError(f"{split_json}: expected a list of entries, got {type(raw).__name__}")
    out = []
    for i, e in enumerate(raw):
        if not isinstance(e, dict) or "id" not in e:
            raise ValueError(f"{split_json}: entry {i} has no 'id': {e!r}")
        template = e.get("template")
        label = None
        if template is not None and classes is not None:
            name = ssv2_class_name(template)
            if name not in classes:
                raise ValueError(
                    f"{split_json}: entry {i} (id {e['id']}): class {name!r} is not "
                    f"in the labels ({len(classes)} classes)"
                )
            label = classes[name]
        out.append(
            SSv2Record(
                str(e["id"]),
                base / video_template.format(e["id"]),
                label,
                template,
                tuple(e.get("placeholders", ())),
            )
        )
    return out


def ssv2_video_records(
    entries: Iterable[SSv2Record], frame_counter: Optional[Callable[[Path], int]] = None
) -> list:
    """:class:`VideoSource` s for labelled SSv2 entries, counting each video's frames with
    ``frame_counter`` (default :func:`tsm_apps.data.video.count_frames`: container metadata)."""
    if frame_counter is None:
        from .video import count_frames as frame_counter
    out = []
    for e in entries:
        if e.label is None:
            raise ValueError(f"SSv2 video {e.id} ({e.path}) has no label (test split?)")
        out.append(VideoSource(e.path, int(frame_counter(e.path)), e.label))
    return out
