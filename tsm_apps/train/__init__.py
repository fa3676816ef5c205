"""Recognizer training: torchrun DDP, the large-batch recipe, multigrid and K-step averaging.

``train(cfg)`` runs one process of a run (``tsm train`` is its command line).
"""
from .config import AveragingConfig, MultigridConfig, TrainConfig, load_config
from .run import train

__all__ = ["AveragingConfig", "MultigridConfig", "TrainConfig", "load_config", "train"]
