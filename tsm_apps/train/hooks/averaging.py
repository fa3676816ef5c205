"""Averaging across processes at run time (:mod:`tsm_apps.train.averaging` holds the maths).

kavg mode: a round every ``k`` steps and at each epoch's end averages the weights, the BN
statistics (pooled) and the optimizer moments (Adam's, SGD's momentum) in one all-reduce, and
the per-process batch adapts to the validation accuracy. :func:`consolidate` equalises the
processes' models before evaluations and checkpoints (DDP: the BN statistics).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..averaging import AdaptiveBatch, AveragingConfig, merge_bn_
from .base import HookBase

if TYPE_CHECKING:
    from ..trainer import Trainer


def consolidate(t: "Trainer", averaged: bool = False) -> None:
    """Give every process the same model state before an evaluation or a checkpoint.

    DDP: pool the per-process BN statistics (one all-reduce). kavg: an averaging round,
    unless one just ran (``averaged``). One process: nothing to do.
    """
    if not t.env.distributed:
        return
    if t.averager is not None:
        if not averaged:
            t.averager.average()
    else:
        merge_bn_(t.model, t.sync_mean)


class AveragingHook(HookBase):
    """Drives ``trainer.averager`` after each step (sets ``trainer.averaged``) and grows the
    batch plan's per-process ``batch`` (:class:`AdaptiveBatch`) after each validation."""

    def __init__(self, cfg: AveragingConfig, batch: int) -> None:
        self.adaptive = AdaptiveBatch(batch, cfg.b1, cfg.b2, cfg.batch_cap or 4 * batch,
                                      cfg.adaptive_rule)

    def before_train(self) -> None:
        if self.trainer.averager is None:
            raise ValueError("AveragingHook needs averaging.method = 'kavg' (no averager)")

    def after_step(self) -> None:
        t = self.trainer
        t.averaged = t.averager.after_step(t.step_in_epoch, t.step_in_epoch == t.steps_in_epoch)

    def after_epoch(self) -> None:
        t = self.trainer
        if t.epoch_val:
            t.plan.batch = self.adaptive.update(t.epoch_val["top1"])

    def state_dict(self) -> dict:
        return {"adaptive": self.adaptive.state_dict()}

    def load_state_dict(self, checkpoint: dict) -> None:
        self.adaptive.load_state_dict(checkpoint["adaptive"])
        self.trainer.plan.batch = self.adaptive.batch
