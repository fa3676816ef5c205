"""Files of long dissection jobs, written atomically through :mod:`tsm_apps.io` (a killed job
leaves either the old file or the new one, never a partial one): JSON, compressed arrays, and
the clip ids used as file names.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Dict

import numpy as np

from tsm_apps.io import atomic_write_bytes, atomic_write_json, atomic_write_with, read_json

__all__ = [
    "atomic_write_bytes",
    "atomic_write_with",
    "write_json",
    "read_json",
    "save_npz",
    "load_npz",
    "clip_id",
]


def write_json(path: str | os.PathLike, obj: Any) -> Path:
    """JSON written atomically (NaN refused: every metric is a number or null)."""
    return atomic_write_json(path, obj)


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
