"""Multigrid at run time: the epoch's learning-rate scale and each step's clip length.

The shapes themselves come from :class:`~tsm_apps.train.multigrid.MultigridSchedule`, the
trainer's batch plan; this hook keeps the LR and the model in step with them.
"""
from __future__ import annotations

from ..multigrid import MultigridSchedule
from .base import HookBase


class MultigridHook(HookBase):
    """``trainer.lr_scale`` and ``trainer.bn_splits`` per epoch (the long-cycle batch over the
    base batch; BN groups of ``bn_base_size`` clips, SlowFast's sub-batch BN) and the
    recognizer's ``num_segments`` per step (the batch's ``T``; the same model throughout)."""

    def before_train(self) -> None:
        plan = self.trainer.plan
        if not isinstance(plan, MultigridSchedule):
            raise TypeError(f"MultigridHook needs a MultigridSchedule batch plan, got "
                            f"{type(plan).__name__} (set multigrid.enabled)")

    def before_epoch(self) -> None:
        t = self.trainer
        t.lr_scale = t.plan.lr_scale(t.epoch, len(t.batches.sampler))
        t.bn_splits = t.plan.bn_splits(t.epoch, len(t.batches.sampler))

    def before_step(self) -> None:
        t = self.trainer
        frames = t.batch[0].shape[1]  # (N, T, 3, S, S)
        if t.model.num_segments != frames:
            t.model.num_segments = frames  # multigrid: same model, new T
