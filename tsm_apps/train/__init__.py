"""Recognizer training: torchrun DDP, the large-batch recipe, multigrid and K-step averaging.

``train(cfg)`` runs one process of a run (``tsm train`` is its command line); it is loaded on
first use, so the command line checks its inputs before the models and data code are imported.
"""

from __future__ import annotations

from ..lazy import lazy_exports
from .config import AveragingConfig, MultigridConfig, TrainConfig, load_config

_LAZY, __getattr__, __dir__ = lazy_exports(__name__, {".run": ("train",)})
__all__ = ["AveragingConfig", "MultigridConfig", "TrainConfig", "load_config", *_LAZY]
