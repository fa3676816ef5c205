"""Checkpoints of our own format, written atomically and always loaded with ``weights_only=True``.

Our format (a plain dict of tensors and Python scalars/containers, so ``weights_only`` loads it)::

    {"format": "tsm_apps.recognizer/1", "config": RecognizerConfig.to_dict(),
     "state_dict": {...}, "meta": {...}, <training state: "optimizer", "scheduler", ...>}

Foreign layouts (official TSM repository, mmaction2) are mapped in :mod:`tsm_apps.checkpoint_compat`.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import torch
from torch import nn

FORMAT = "tsm_apps.recognizer/1"


def atomic_save(obj: Any, path: str | os.PathLike) -> Path:
    """``torch.save`` to a temporary file in the same folder, then rename over ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        torch.save(obj, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return path


def read_checkpoint(path: str | os.PathLike) -> dict:
    """Load a checkpoint file as a dict with ``weights_only=True`` (CPU tensors)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint not found: {path}")
    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # pickle errors, truncated zip, ...
        raise ValueError(f"cannot read checkpoint {path}: {e}") from e
    if not isinstance(obj, dict):
        raise ValueError(f"checkpoint {path} holds a {type(obj).__name__}, expected a dict")
    return obj


def save_checkpoint(path: str | os.PathLike, model: nn.Module, meta: dict | None = None,
                    **training_state: Any) -> Path:
    """Save ``model`` (a :class:`~tsm_apps.recognizer.Recognizer`, possibly DDP-wrapped)."""
    model = getattr(model, "module", model)
    obj = {"format": FORMAT, "config": model.config.to_dict(),
           "state_dict": {k: v.detach().cpu() for k, v in model.state_dict().items()},
           "meta": dict(meta or {})}
    obj.update(training_state)
    return atomic_save(obj, path)
