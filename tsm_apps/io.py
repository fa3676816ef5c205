"""Files, written so that nothing already written is lost, and checkpoints, read safely.

Every package writes through :func:`atomic_path` (or the helpers built on it): the data goes to
a temporary file in the target's folder that is renamed over the target only when complete, so
a killed job leaves the old file or the new one, never a partial one. Checkpoints are read with
``torch.load(weights_only=True)`` (:func:`read_checkpoint`), admitting numpy data only.
"""

from __future__ import annotations

import io
import json
import os
import re
import tempfile
import warnings
import zipfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterator

import numpy as np
import torch


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path`` (same suffix, so writers that pick a format from
    it still work); on a clean exit it replaces ``path``, on an error it is removed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(
        prefix=f".{path.stem}.", suffix=f".tmp{path.suffix}", dir=path.parent
    )
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (flushed to disk before the rename)."""
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    return Path(path)


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | os.PathLike, obj: Any, indent: int | None = 1) -> Path:
    """Write ``obj`` as JSON (NaN/inf refused: JSON has no such numbers) atomically."""
    return atomic_write_text(path, json.dumps(obj, indent=indent, allow_nan=False) + "\n")


def atomic_write_with(path: str | os.PathLike, write: Callable[[BinaryIO], None]) -> Path:
    """Let ``write`` fill an in-memory buffer, then write the buffer atomically to ``path``."""
    buf = io.BytesIO()
    write(buf)
    return atomic_write_bytes(path, buf.getvalue())


def read_json(path: str | os.PathLike, missing_ok: bool = False) -> Any:
    """The parsed file. A missing file raises FileNotFoundError naming it, or gives None with
    ``missing_ok``; a broken one raises ValueError naming the file, the line and the reason."""
    path = Path(path)
    if missing_ok and not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(f"JSON file not found: {path}") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}:{e.lineno}: not valid JSON ({e.msg}, column {e.colno})") from None


def atomic_save(obj: Any, path: str | os.PathLike) -> Path:
    """``torch.save`` ``obj`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        torch.save(obj, tmp)
    return Path(path)


def numpy_safe_globals() -> list:
    """numpy scalars/arrays/dtypes: plain data that mmengine puts in checkpoint meta."""
    core = getattr(np, "_core", None) or np.core
    dtypes = [getattr(np.dtypes, n) for n in dir(np.dtypes) if n.endswith("DType")]
    funcs = [core.multiarray._reconstruct, core.multiarray.scalar]
    old_names = [(f, f"numpy.core.multiarray.{f.__name__}") for f in funcs]  # numpy 1.x pickles
    return funcs + old_names + [np.ndarray, np.dtype] + dtypes


LEGACY_MAGIC = b"\x80\x02\x8a\nl\xfc\x9cF\xf9 j\xa8P\x19"
"""How a legacy (pre-zip) ``torch.save`` file starts: its magic number, pickled (protocol 2)."""


def safe_load(path: str | os.PathLike, mmap: bool = False) -> Any:
    """``torch.load(path, weights_only=True)`` on CPU, numpy data admitted, torch's warnings
    silenced; ``mmap``: tensors of a zip checkpoint are memory-mapped, not read.

    Raises FileNotFoundError for a missing file and ValueError with one line naming the file
    and what it is instead, whatever the file holds (a folder, an empty file, a plain pickle,
    a zip without ``data.pkl``, a truncated checkpoint, random bytes, objects a safe load
    refuses); the message never quotes torch's advice to load unsafely."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path}: a folder, expected a checkpoint file")
    if not path.is_file():
        raise FileNotFoundError(f"{path}: checkpoint not found")
    kind = checkpoint_format(path)
    if kind not in ("zip", "legacy"):
        raise ValueError(f"{path}: {kind}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. "Detected pickle protocol 4 ..."
            with torch.serialization.safe_globals(numpy_safe_globals()):
                return torch.load(
                    path, map_location="cpu", weights_only=True, mmap=mmap and kind == "zip"
                )
    except Exception as e:  # pickle errors, damaged records, refused objects, ...
        raise ValueError(f"{path}: {_load_error(path, e)}") from None


def read_checkpoint(path: str | os.PathLike, mmap: bool = False) -> dict:
    """:func:`safe_load` of a file that must hold a dict (a state dict or a checkpoint);
    ``mmap``: its tensors are mapped, not read (a zip checkpoint)."""
    obj = safe_load(path, mmap=mmap)
    if not isinstance(obj, dict):
        raise ValueError(
            f"{path}: holds a {type(obj).__name__}, expected a dict of tensors or a checkpoint dict"
        )
    return obj


def checkpoint_format(path: Path) -> str:
    """``'zip'`` (``torch.save`` since torch 1.6), ``'legacy'`` (the older pickle stream), or
    what the file is instead, as the phrase of a message (``'<file>: <phrase>'``)."""
    with open(path, "rb") as f:
        head = f.read(len(LEGACY_MAGIC))
    if not head:
        return "not a PyTorch checkpoint: an empty file"
    if head.startswith(b"PK\x03\x04"):
        try:
            with zipfile.ZipFile(path) as z:
                names = z.namelist()
        except (zipfile.BadZipFile, OSError):
            return "a truncated or damaged zip archive, expected a PyTorch checkpoint"
        if not any(n.endswith("data.pkl") for n in names):
            return "not a PyTorch checkpoint: a zip archive without data.pkl"
        return "zip"
    if head == LEGACY_MAGIC:
        return "legacy"
    if len(head) >= 2 and head[0] == 0x80 and head[1] <= 5:  # pickle PROTO opcode
        return "not a PyTorch checkpoint: a plain pickle (torch.save writes a zip archive)"
    return "not a PyTorch checkpoint (neither a zip archive nor a pickle)"


def _load_error(path: Path, err: Exception) -> str:
    """Why torch could not load a file that looks like a checkpoint, in one line."""
    try:
        unsafe = torch.serialization.get_unsafe_globals_in_checkpoint(path)
    except Exception:  # legacy (non-zip) format: read the name from torch's message
        unsafe = re.findall(r"Unsupported global: GLOBAL ([\w.]+)", str(err))
    allowed = {
        g[1] if isinstance(g, tuple) else f"{g.__module__}.{g.__name__}"
        for g in numpy_safe_globals()
    }
    unsafe = [g for g in unsafe if g not in allowed]
    if unsafe:
        return (
            f"contains objects a safe load refuses ({unsafe[0]}), expected tensors and plain data"
        )
    text = str(err)
    if any(w in text for w in ("central directory", "zip archive", "EOF")) or isinstance(
        err, EOFError
    ):
        return "a truncated or damaged PyTorch checkpoint"
    first = text.strip().splitlines()[0] if text.strip() else ""
    if not first or "weights_only" in first.lower() or "weights only" in first.lower():
        first = type(err).__name__  # never pass on torch's advice to load unsafely
    return f"not a readable PyTorch checkpoint ({first[:200]})"
