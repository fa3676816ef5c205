"""Multigrid at run time: the recognizer follows each batch's clip length.

The shapes, the LR phases and the BN groups come from
:class:`~tsm_apps.train.multigrid.MultigridSchedule`, the loop's batch plan; this hook keeps the
model in step with them.
"""

from __future__ import annotations

from ..multigrid import MultigridSchedule
from .base import HookBase


class MultigridHook(HookBase):
    """Sets the recognizer's ``num_segments`` to the batch's ``T`` before each step (the same
    model throughout)."""

    def before_train(self) -> None:
        plan = self.loop.plan
        if not isinstance(plan, MultigridSchedule):
            raise TypeError(
                f"MultigridHook needs a MultigridSchedule batch plan, got "
                f"{type(plan).__name__} (set multigrid.enabled)"
            )

    def before_step(self) -> None:
        model, frames = self.loop.model, self.loop.batch[0].shape[1]  # (N, T, C, S, S)
        if model.num_segments != frames:
            model.num_segments = frames
