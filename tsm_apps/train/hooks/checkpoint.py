"""Checkpoints and exact resume: ``last.pth``, ``best.pth``, and early stops (SIGTERM, max_steps).

``last.pth`` is written at the end of every epoch, every ``checkpoint_every`` steps and when
the run stops early; ``best.pth`` when the validation top-1 improves. Writes are atomic
(:func:`~tsm_apps.checkpoint.reading.save_checkpoint`, main process only). A checkpoint holds,
beside the model, the optimizer, scaler, counters, RNG states and all-reduce counts, so
:func:`resume` continues a run exactly where it stopped.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import torch

from ...checkpoint.reading import read_checkpoint, save_checkpoint
from ..state import StopFlag, rng_state, set_rng_state, stop_on_sigterm
from .averaging import consolidate
from .base import HookBase

if TYPE_CHECKING:
    from ..trainer import Trainer


def training_state(t: "Trainer") -> dict:
    """A checkpoint's entries beside the model: optimizer, counters, RNG, hooks' state."""
    state = {"optimizer": t.optimizer.state_dict(), "scaler": t.scaler.state_dict(),
             "scheduler": {"base_lr": t.schedule.base_lr, "epochs": t.schedule.epochs,
                           "warmup_epochs": t.schedule.warmup_epochs},
             "epoch": t.epoch, "step_in_epoch": t.step_in_epoch, "step": t.step,
             "best_top1": t.best_top1, "wall_s": t.wall,
             "epoch_acc": list(t.epoch_acc), "rng": rng_state(),
             "comm": {"sync": t.sync.state_dict(), "metrics": t.comm_metrics.state_dict()},
             "adaptive": {}}  # in every checkpoint; AveragingHook fills it under kavg
    for hook in t.hooks:
        state.update(hook.state_dict())
    return state


def save(t: "Trainer", name: str) -> None:
    """``work_dir/name`` (main process): model, :func:`training_state`, config and validations."""
    if t.env.is_main:
        meta = dict(t.meta, train_config=t.cfg.to_dict(), val=dict(t.last_val),
                    best_val=dict(t.best_val))
        save_checkpoint(t.work_dir / name, t.model, meta=meta, **training_state(t))


def resume(t: "Trainer") -> bool:
    """Restore from ``last.pth`` if present (a fresh start otherwise, as torchrun restarts)."""
    path = t.work_dir / "last.pth"
    if not path.is_file():
        return False
    ck = read_checkpoint(path)
    t.model.load_state_dict(ck["state_dict"])
    t.optimizer.load_state_dict(ck["optimizer"])
    t.scaler.load_state_dict(ck["scaler"])
    t.epoch, t.step_in_epoch, t.step = ck["epoch"], ck["step_in_epoch"], ck["step"]
    t.best_top1, t.wall = ck["best_top1"], ck["wall_s"]
    t.epoch_acc = list(ck["epoch_acc"])
    t.sync.load_state_dict(ck["comm"]["sync"])
    t.comm_metrics.load_state_dict(ck["comm"]["metrics"])
    for hook in t.hooks:
        hook.load_state_dict(ck)
    t.last_val = dict(ck["meta"].get("val", {}))
    t.best_val = dict(ck["meta"].get("best_val", {}))
    set_rng_state(ck["rng"])
    return True


class CheckpointHook(HookBase):
    """Saves ``last.pth``/``best.pth`` and stops the run on SIGTERM (any process) or at
    ``max_steps``, saving first. Register it last: it saves what the other hooks updated."""

    def __init__(self) -> None:
        self.stop: Optional[StopFlag] = None

    def before_train(self) -> None:
        self.stop = self.trainer.scope.enter_context(stop_on_sigterm())

    def after_step(self) -> None:
        t, cfg = self.trainer, self.trainer.cfg
        halt = bool(cfg.max_steps and t.step >= cfg.max_steps)
        # kavg looks for a stop request only when it communicates anyway
        if (halt or not t.kavg or t.averaged) and self._stop_everywhere(self.stop.requested):
            halt = True
        if t.step_in_epoch == t.steps_in_epoch and not halt:
            return  # the epoch's end consolidates and saves
        if halt or (cfg.checkpoint_every and t.step % cfg.checkpoint_every == 0):
            consolidate(t, t.averaged)
            save(t, "last.pth")
        if halt:
            t.stopped = True

    def after_epoch(self) -> None:
        save(self.trainer, "last.pth")
        if self.trainer.new_best:
            save(self.trainer, "best.pth")

    def after_train(self) -> None:
        if self.stop is not None:
            self.trainer.signum = self.stop.signum

    def _stop_everywhere(self, local: bool) -> bool:
        """Whether any process was asked to stop (one tiny all-reduce when distributed)."""
        t = self.trainer
        if not t.env.distributed:
            return local
        flag = torch.tensor([float(local)], device=t.device)
        return bool(t.comm_metrics.all_reduce_(flag, "sum").item() > 0)
