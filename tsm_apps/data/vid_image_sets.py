"""The ImageNet-VID split lists under ``ImageSets/``: writing and reading them.

The devkit's lists (ILSVRC2015 devkit, readme section 4.2; ``train.txt`` as in the 2017
release), under ``ImageSets/VID/``::

    train_<k>.txt   "<snippet> 1": train snippets holding class k (k = 1..30)
    train.txt       "<snippet>/%06d <index>": every train frame, index from 1
    val.txt         "<snippet>/%06d <index>": every val frame, index from 1
    test.txt        the same for the test frames (the release has no test XML;
                    a synthetic set annotates its test split)

The MSRA/FGFA lists (reused by mmtracking, MEGA, SELSA), directly under ``ImageSets/``, paths
relative to ``Data/VID`` or ``Data/DET`` (split first)::

    VID_train_15frames.txt   "train/<snippet> 1 <frame> <frames>": one line per key frame, the
                             0-based frame = floor(frames*(2i+1)/30), i = 0..14, de-duplicated
    VID_val_videos.txt       "val/<snippet> <first global frame id> 0 <frames>" (ids from 1)
    VID_test_videos.txt      the same for the test snippets ("test/<snippet> ...")
    DET_train_30classes.txt  "train/<DET image> 1", e.g. "train/ILSVRC2013_train/n01503061/
                             n01503061_5 1" (images holding a VID class)

Snippet names, classes and the rest of the layout: :mod:`tsm_apps.data.vid_layout`.
"""

from __future__ import annotations

from pathlib import Path

from .vid_layout import VID_CLASSES


def frame_lines(snippets: dict[str, int]) -> list[str]:
    """``train.txt``/``val.txt`` lines: ``<snippet>/%06d <index>``, index from 1, for
    ``snippets`` = {snippet: number of frames} in order."""
    lines, index = [], 1
    for snippet, n in snippets.items():
        for f in range(n):
            lines.append(f"{snippet}/{f:06d} {index}")
            index += 1
    return lines


def class_snippet_lines(snippet_classes: dict[str, set[str]]) -> dict[int, list[str]]:
    """``train_<k>.txt`` lines for k = 1..30: ``<snippet> 1`` for each snippet holding class k."""
    out = {k: [] for k in range(1, len(VID_CLASSES) + 1)}
    for k, (wnid, _) in enumerate(VID_CLASSES, start=1):
        out[k] = [f"{s} 1" for s, wnids in snippet_classes.items() if wnid in wnids]
    return out


def write_image_sets(
    root: str | Path,
    train: dict[str, tuple[int, set[str]]],
    val: dict[str, int],
    test: dict[str, int] | None = None,
) -> None:
    """Write ``ImageSets/VID``: ``train`` = {snippet: (frames, WordNet ids)}, ``val`` (and
    ``test``, when given) = {snippet: frames}. All 30 ``train_<k>.txt`` are written (empty for
    absent classes)."""
    d = Path(root) / "ImageSets" / "VID"
    d.mkdir(parents=True, exist_ok=True)
    files = {
        "train.txt": frame_lines({s: n for s, (n, _) in train.items()}),
        "val.txt": frame_lines(val),
    }
    if test is not None:
        files["test.txt"] = frame_lines(test)
    for k, lines in class_snippet_lines({s: c for s, (_, c) in train.items()}).items():
        files[f"train_{k}.txt"] = lines
    for name, lines in files.items():
        (d / name).write_text("".join(line + "\n" for line in lines))


def msra_key_frames(frames: int, k: int = 15) -> list[int]:
    """0-based key frames of a ``frames``-long snippet in ``VID_train_15frames.txt``:
    ``floor(frames * (2i + 1) / (2k))`` for ``i < k``, de-duplicated (all frames when short)."""
    return sorted({frames * (2 * i + 1) // (2 * k) for i in range(k)})


def video_lines(split: str, snippets: dict[str, int]) -> list[str]:
    """``VID_<split>_videos.txt`` lines: ``<split>/<snippet> <first global frame id> 0
    <frames>`` for ``snippets`` = {snippet: frames} in order, global ids from 1."""
    lines, start = [], 1
    for s, n in snippets.items():
        lines.append(f"{split}/{s} {start} 0 {n}")
        start += n
    return lines


def msra_lines(
    train: dict[str, int], val: dict[str, int], det: list[str], test: dict[str, int] | None = None
) -> dict[str, list]:
    """``{file name: lines}`` of the three MSRA lists for ``train``/``val`` = {snippet: frames}
    and ``det`` = DET image entries relative to ``Data/DET/train``; ``VID_test_videos.txt``
    too for ``test`` = {snippet: frames}."""
    vid_train = [f"train/{s} 1 {f} {n}" for s, n in train.items() for f in msra_key_frames(n)]
    out = {
        "VID_train_15frames.txt": vid_train,
        "VID_val_videos.txt": video_lines("val", val),
        "DET_train_30classes.txt": [f"train/{e} 1" for e in det],
    }
    if test is not None:
        out["VID_test_videos.txt"] = video_lines("test", test)
    return out


def read_list(path: str | Path) -> list[tuple]:
    """Any ImageSets list: ``[(entry, number)]`` for two-column lines (devkit lists,
    ``DET_train_30classes.txt``), ``[(entry, number, frame, frames)]`` for four-column lines
    (``VID_train_15frames.txt``, ``VID_val_videos.txt``); one format per file. ValueError naming
    the file and line for a malformed line."""
    path = Path(path)
    out, width = [], None
    for lineno, line in enumerate(path.read_text().splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) not in (2, 4) or (width is not None and len(parts) != width):
            raise ValueError(
                f"{path}:{lineno}: expected '<entry> <number>' or '<entry> <number> "
                f"<frame> <frames>'{'' if width is None else f' ({width} columns as line 1)'}, "
                f"got {line!r}"
            )
        width = len(parts)
        try:
            out.append((parts[0], *(int(p) for p in parts[1:])))
        except ValueError:
            raise ValueError(f"{path}:{lineno}: {' '.join(parts[1:])!r} are not integers") from None
    return out


def read_image_set(path: str | Path) -> list[tuple[str, int]]:
    """Parse an ImageSets/VID list: ``[(entry, number)]``; a malformed line raises
    ``ValueError`` naming the file and line number."""
    path = Path(path)
    out = []
    for lineno, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2:
            raise ValueError(f"{path}:{lineno}: expected '<entry> <number>', got {line!r}")
        try:
            out.append((parts[0], int(parts[1])))
        except ValueError:
            raise ValueError(f"{path}:{lineno}: {parts[1]!r} is not an integer") from None
    return out
