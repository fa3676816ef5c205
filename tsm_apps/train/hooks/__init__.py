"""Training hooks (detectron2's ``HookBase`` protocol), one concern per module.

The default order (:meth:`~tsm_apps.train.trainer.Trainer.default_hooks`): multigrid shapes,
evaluation, K-step averaging, logging, checkpoints.
"""
from .averaging import AveragingHook
from .base import HookBase
from .checkpoint import CheckpointHook
from .evaluation import EvaluationHook
from .log import LogHook
from .multigrid import MultigridHook

__all__ = ["AveragingHook", "CheckpointHook", "EvaluationHook", "HookBase", "LogHook",
           "MultigridHook"]
