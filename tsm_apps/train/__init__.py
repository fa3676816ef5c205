"""Recognizer training: torchrun DDP, the large-batch recipe, multigrid and K-step averaging.

``train(cfg)`` runs one process of a run (``tsm train`` is its command line); it is loaded on
first use, so the command line checks its inputs before the models and data code are imported.
"""
from __future__ import annotations

from typing import Any

from .config import AveragingConfig, MultigridConfig, TrainConfig, load_config

__all__ = ["AveragingConfig", "MultigridConfig", "TrainConfig", "load_config", "train"]


def __getattr__(name: str) -> Any:
    if name == "train":
        from .run import train
        return train
    raise AttributeError(f"module 'tsm_apps.train' has no attribute {name!r}")
