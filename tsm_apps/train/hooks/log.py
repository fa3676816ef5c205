"""Logging: ``config.json``, ``metrics.csv`` rows, TensorBoard scalars and the progress bar.

Rows (:class:`~tsm_apps.train.log.MetricsLog`): ``train_step`` every ``log_every`` steps (the
loss averaged over processes), ``train`` after each epoch (loss over the epoch's clips, clips
per second) and ``val`` after each validation. The hook also keeps the run's clock
(``trainer.wall``) and the epoch's running totals (``trainer.epoch_acc``).
"""
from __future__ import annotations

import time
from contextlib import closing
from typing import Optional

import torch
from torch import Tensor

from ..config import save_config
from ..log import MetricsLog, Progress
from .base import HookBase


class LogHook(HookBase):
    """Writes every row of ``metrics.csv`` (main process) and times the steps."""

    def __init__(self) -> None:
        self.log: Optional[MetricsLog] = None
        self.bar: Optional[Progress] = None
        self.t0 = 0.0

    def before_train(self) -> None:
        t = self.trainer
        if t.env.is_main:
            save_config(t.cfg, t.work_dir / "config.json")
        self.log = t.scope.enter_context(closing(
            MetricsLog(t.work_dir, t.env.is_main, t.cfg.tensorboard,
                       t.step if t.cfg.resume else None)))

    def before_epoch(self) -> None:
        t = self.trainer
        self.bar = t.epoch_scope.enter_context(
            Progress(len(t.batches), t.cfg.progress and t.env.is_main,
                     f"epoch {t.epoch + 1}/{t.cfg.epochs}"))
        self.t0 = time.perf_counter()

    def after_step(self) -> None:
        t, cfg = self.trainer, self.trainer.cfg
        clips = len(t.batch[1])
        dt = time.perf_counter() - self.t0
        self.t0 = time.perf_counter()
        t.wall += dt
        t.epoch_acc = [t.epoch_acc[0] + float(t.loss) * clips,
                       t.epoch_acc[1] + clips, t.epoch_acc[2] + dt]
        self.bar.update(float(t.loss), t.lr, clips * t.env.world_size / max(dt, 1e-9))
        if cfg.log_every and t.step % cfg.log_every == 0:
            self.log.write(epoch=t.epoch, step=t.step, split="train_step",
                           loss=self._mean_loss(t.loss), lr=t.lr, wall_s=t.wall)

    def after_epoch(self) -> None:
        t = self.trainer
        acc = torch.tensor(t.epoch_totals[:2], dtype=torch.float64, device=t.device)
        t.comm_metrics.all_reduce_(acc, "sum")
        loss, clips = float(acc[0] / max(acc[1], 1)), int(acc[1])
        group = t.optimizer.param_groups[0]
        self.log.write(epoch=t.epoch - 1, step=t.step, split="train", loss=loss,
                       lr=group["lr"] / group["lr_mult"],
                       clips_per_s=clips / max(t.epoch_totals[2], 1e-9), wall_s=t.wall)
        if t.epoch_val:
            self.log.write(epoch=t.epoch - 1, step=t.step, split="val", **t.epoch_val,
                           wall_s=t.wall)

    def _mean_loss(self, loss: Tensor) -> float:
        t = self.trainer
        return float(t.comm_metrics.all_reduce_(loss.float().clone().view(1), "mean").item())
