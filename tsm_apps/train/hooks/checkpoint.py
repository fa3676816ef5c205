"""Checkpoints: ``last.pth``, ``best.pth``, and early stops (SIGTERM, max_steps).

``last.pth`` is written at the end of every epoch, every ``checkpoint_every`` steps and when
the run stops early; ``best.pth`` when ``evaluation`` found a new best. Writes are atomic
(:func:`~tsm_apps.checkpoint.reading.save_checkpoint`, main process only). A checkpoint holds,
beside the model, the loop's state (optimizer, scaler, counters, RNG, synchronisation counts)
and every hook's under ``"hooks"`` (keyed by the hook's class), so a resume continues the run
exactly where it stopped.
"""

from __future__ import annotations

from typing import Optional

import torch

from ...checkpoint.reading import save_checkpoint
from ..state import StopFlag, stop_on_sigterm
from .base import HookBase, Loop
from .evaluation import EvaluationHook


def training_state(loop: Loop) -> tuple:
    """``(entries, meta)``: the loop's checkpoint entries (each hook's state under ``"hooks"``)
    and the hooks' ``"meta"`` entries merged, for the checkpoint's meta."""
    state, meta = dict(loop.state_dict()), {}
    for entries in state["hooks"].values():
        meta.update(entries.get("meta", {}))
    return state, meta


def save(loop: Loop, name: str) -> None:
    """``work_dir/name`` (main process): model, :func:`training_state`, config."""
    if loop.env.is_main:
        state, meta = training_state(loop)
        meta = dict(loop.meta, train_config=loop.cfg.to_dict(), **meta)
        save_checkpoint(loop.work_dir / name, loop.model, meta=meta, **state)


class CheckpointHook(HookBase):
    """Saves ``last.pth``/``best.pth`` and stops the run on SIGTERM (any process) or at
    ``max_steps``, saving first. Register it last: it saves what the other hooks updated."""

    def __init__(self, evaluation: Optional[EvaluationHook] = None) -> None:
        self.evaluation = evaluation
        self.stop: Optional[StopFlag] = None
        self.signum = 0

    def before_train(self) -> None:
        self.stop = self.loop.scope.enter_context(stop_on_sigterm())

    def after_step(self) -> None:
        loop, cfg = self.loop, self.loop.cfg
        halt = bool(cfg.max_steps and loop.step >= cfg.max_steps)
        # K-step averaging looks for a stop request only when it communicates anyway
        if (halt or loop.synced) and self._stop_everywhere(self.stop.requested):
            halt = True
        if loop.step_in_epoch == loop.steps_in_epoch and not halt:
            return  # the epoch's end consolidates and saves
        if halt or (cfg.checkpoint_every and loop.step % cfg.checkpoint_every == 0):
            loop.consolidate()
            save(loop, "last.pth")
        if halt:
            loop.stopped = True

    def after_epoch(self) -> None:
        save(self.loop, "last.pth")
        if self.evaluation is not None and self.evaluation.new_best:
            save(self.loop, "best.pth")

    def after_train(self) -> None:
        if self.stop is not None:
            self.signum = self.stop.signum

    def summary(self) -> dict:
        return {"signal": self.signum}

    def _stop_everywhere(self, local: bool) -> bool:
        """Whether any process was asked to stop (one tiny all-reduce when distributed)."""
        loop = self.loop
        if not loop.env.distributed:
            return local
        flag = torch.tensor([float(local)], device=loop.device)
        return bool(loop.metric_comm.all_reduce_(flag, "sum").item() > 0)
