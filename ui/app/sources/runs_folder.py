"""Finding things in a runs folder: videos, VID snippets, training logs, benchmark tables.

Only file-system discovery and light parsing of the plain files the jobs write (``metrics.csv``,
``bench.json``); the files produced by ``detection`` and ``dissect`` are read through their
own packages (see :mod:`ui.app.sources`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from tsm_apps.io import read_json

VIDEO_SUFFIXES = (".mp4", ".avi", ".mkv", ".webm", ".mov", ".m4v")
VID_VAL = Path("Data") / "VID" / "val"
SKIP_DIRS = {".git", "__pycache__", ".venv", "node_modules"}
TEXT_COLUMNS = ("split",)


def within(path: Path, root: Path) -> bool:
    """Whether ``path``, links resolved, lies in the folder ``root`` (links resolved): what a
    typed path must satisfy too (:func:`ui.app.access.confine`)."""
    try:
        return Path(path).resolve().is_relative_to(Path(root).resolve())
    except (OSError, RuntimeError):  # a link loop
        return False


def _walk(root: Path, max_depth: int = 8):
    """Files under ``root`` (sorted, hidden and tool folders skipped, depth-limited), each
    inside ``root`` once links are resolved: a link that points out of it is not listed."""
    if not root.is_dir():
        return
    stack = [(root, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            continue
        for e in entries:
            if e.name.startswith(".") or e.name in SKIP_DIRS or not within(e, root):
                continue
            if e.is_dir():
                if depth < max_depth:
                    stack.append((e, depth + 1))
            else:
                yield e


def rel(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` for display (the path itself when outside it)."""
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def find_videos(root: Path) -> list[Path]:
    """Video files under ``root`` (mp4, avi, mkv, webm, mov, m4v), sorted by path."""
    return sorted(p for p in _walk(root) if p.suffix.lower() in VIDEO_SUFFIXES)


def find_checkpoints(root: Path, limit: int = 200) -> list[Path]:
    """Recognizer checkpoints (``*.pth``) under ``root``, sorted (at most ``limit``); detector
    work folders (holding the ``config.py`` of ``tsm detect train``) are left out."""
    out = [p for p in _walk(root) if p.suffix == ".pth" and not (p.parent / "config.py").is_file()]
    return sorted(out)[:limit]


def find_vid_snippets(root: Path) -> list[Path]:
    """ImageNet-VID val snippets (``.../Data/VID/val/<snippet>/%06d.JPEG``) under ``root``."""
    out = []
    for base in sorted({p.parent.parent for p in _walk(root) if p.suffix == ".JPEG"}):
        if base.parts[-3:] == VID_VAL.parts:
            out += sorted(d for d in base.iterdir() if d.is_dir() and within(d, root))
    return out


def find_files(root: Path, name: str) -> list[Path]:
    """Files called ``name`` under ``root``, newest first."""
    return sorted(
        (p for p in _walk(root) if p.name == name), key=lambda p: p.stat().st_mtime, reverse=True
    )


def read_metrics_csv(path: Path, text_columns: tuple = TEXT_COLUMNS) -> pd.DataFrame:
    """A ``metrics.csv`` training log as a DataFrame: numbers in every column except
    ``text_columns`` (e.g. ``split``); blank cells become NaN.

    Raises ``ValueError`` naming the file and line for a cell that is not a number.
    """
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    if df.empty:
        raise ValueError(f"{path}: no rows")
    for col in df.columns:
        if col in text_columns:
            continue
        cells = df[col].str.strip()
        values = pd.to_numeric(cells.where(cells != ""), errors="coerce")
        bad = values.isna() & (cells != "")
        if bad.any():
            i = int(bad.to_numpy().argmax())
            raise ValueError(
                f"{path}:{i + 2}: column {col!r} holds {cells.iloc[i]!r}, expected a number"
            )
        df[col] = values.astype(float)
    return df


def read_bench_json(path: Path) -> tuple[list[dict], dict]:
    """Rows and metadata of a ``bench.json``.

    Accepts ``tsm bench``'s report ``{"machine", "quick", "seconds", "figures": [rows]}`` (also
    ``"rows"``/``"results"``) or a bare list of rows; a row is ``{name, value, unit, goal, ...}``.
    Nested values (e.g. ``detail``) are flattened to text. Returns ``(rows, metadata)``.
    """
    data = read_json(path)
    meta: dict = {}
    if isinstance(data, dict):
        key = next((k for k in ("figures", "rows", "results") if k in data), None)
        meta = {k: v for k, v in data.items() if k != key}
        data = data.get(key) if key else None
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list of {{name, value, unit, goal}} rows")
    rows = []
    for i, r in enumerate(data):
        if not isinstance(r, dict) or "name" not in r or "value" not in r:
            raise ValueError(f"{path}: row {i} lacks 'name' or 'value': {r!r}")
        rows.append(
            {k: (json.dumps(v) if isinstance(v, (dict, list)) else v) for k, v in r.items()}
        )
    return rows, meta
