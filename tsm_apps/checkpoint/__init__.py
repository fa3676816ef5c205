"""Checkpoints: reading and writing ours (:mod:`.reading`), recognising the official TSM,
mmaction2, torchvision and mmpretrain layouts (:mod:`.layouts`), what a checkpoint file is --
its official name, class names, test segments and test protocol (:mod:`.identity`) -- opening a
checkpoint file, the one way in for every tool (:mod:`.opening`), and ONNX export
(:mod:`.export`). ``load_checkpoint`` / ``save_checkpoint`` load on first use."""

from __future__ import annotations

from ..lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__, {".reading": ("load_checkpoint", "save_checkpoint")}
)
