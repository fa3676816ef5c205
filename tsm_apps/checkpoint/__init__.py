"""Checkpoints: reading and writing ours (:mod:`.reading`), recognising the official TSM,
mmaction2, torchvision and mmpretrain layouts (:mod:`.layouts`), and ONNX export
(:mod:`.export`). ``load_checkpoint`` / ``save_checkpoint`` load on first use."""
from __future__ import annotations

from typing import Any

__all__ = ["load_checkpoint", "save_checkpoint"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import reading
        return getattr(reading, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
