"""Atomic files for long dissection jobs: every file is written to a temporary name in its
folder and renamed over the target, so a killed job leaves either the old file or the new one,
never a partial one.
"""
from __future__ import annotations

import io
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Callable, Dict

import numpy as np


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file and ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return path


def atomic_write_with(path: str | os.PathLike, write: Callable[[io.BytesIO], None]) -> Path:
    """Let ``write`` fill a buffer, then write the buffer atomically to ``path``."""
    buf = io.BytesIO()
    write(buf)
    return atomic_write_bytes(path, buf.getvalue())


def write_json(path: str | os.PathLike, obj: Any) -> Path:
    return atomic_write_bytes(path, (json.dumps(obj, indent=1, allow_nan=False) + "\n").encode())


def read_json(path: str | os.PathLike) -> Any:
    path = Path(path)
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON ({e})") from e


def save_npz(path: str | os.PathLike, arrays: Dict[str, np.ndarray]) -> Path:
    """Compressed ``.npz`` written atomically."""
    return atomic_write_with(path, lambda buf: np.savez_compressed(buf, **arrays))


def load_npz(path: str | os.PathLike) -> Dict[str, np.ndarray]:
    with np.load(Path(path), allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def clip_id(video_path: str) -> str:
    """A file-name-safe id for a clip: ``videos/val_00003.mp4`` -> ``videos__val_00003``."""
    stem = re.sub(r"\.[A-Za-z0-9]{2,4}$", "", str(video_path).strip("/"))
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", stem.replace("/", "__"))
