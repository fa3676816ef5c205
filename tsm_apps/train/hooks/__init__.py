"""Training hooks (detectron2's ``HookBase`` protocol), one concern per module.

Hooks see the loop only through :class:`~tsm_apps.train.hooks.base.Loop`. The default order
(:func:`.defaults.default_hooks`): multigrid clip length, precise BN, evaluation, the adaptive
batch of K-step averaging, logging, checkpoints.
"""

from .averaging import AveragingHook
from .base import HookBase, Loop
from .checkpoint import CheckpointHook
from .defaults import default_hooks
from .evaluation import EvaluationHook
from .log import LogHook
from .multigrid import MultigridHook
from .precise_bn import PreciseBNHook

__all__ = [
    "AveragingHook",
    "CheckpointHook",
    "EvaluationHook",
    "HookBase",
    "LogHook",
    "Loop",
    "MultigridHook",
    "PreciseBNHook",
    "default_hooks",
]
