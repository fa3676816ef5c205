"""The default hooks of a training run, in their order."""

from __future__ import annotations

from typing import Any

from .averaging import AveragingHook
from .checkpoint import CheckpointHook
from .evaluation import EvaluationHook
from .log import LogHook
from .multigrid import MultigridHook
from .precise_bn import PreciseBNHook


def default_hooks(trainer: Any) -> list:
    """Multigrid, precise BN (if enabled), evaluation, adaptive batch (kavg), log, checkpoint,
    for ``trainer`` (:class:`~tsm_apps.train.trainer.Trainer`: its ``cfg``, ``train_set``,
    ``val_set``, ``averager`` and ``plan``): the batch and the val row need the epoch's
    validation, checkpoints what others updated."""
    evaluation = EvaluationHook(trainer.val_set)
    hooks = [MultigridHook()] if trainer.cfg.multigrid.enabled else []
    hooks += [PreciseBNHook(trainer.train_set)] if trainer.cfg.optim.precise_bn_batches else []
    hooks.append(evaluation)
    if trainer.averager is not None:
        hooks.append(AveragingHook(trainer.cfg.averaging, trainer.plan.batch, evaluation))
    return hooks + [LogHook(evaluation), CheckpointHook(evaluation)]
