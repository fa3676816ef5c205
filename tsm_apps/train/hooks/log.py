"""Logging: ``config.json``, ``metrics.csv`` rows, TensorBoard scalars and the progress bar.

Rows (:class:`~tsm_apps.train.log.MetricsLog`): ``train_step`` every ``log_every`` steps (the
loss averaged over processes), ``train`` after each epoch (loss over the epoch's clips, clips
per second, the epoch's synchronisations and their bytes) and ``val`` after each validation.
The hook also keeps the run's clock (``wall``) and the epoch's running totals (``epoch_acc``:
loss sum, clips, seconds of this process; ``epoch_comm``: the synchronisation counts when the
epoch began), all in checkpoints, so a resumed run logs what the uninterrupted one does. The
loss sum is added up on the device (float64, the same bits as adding Python floats), so a step
never waits for the GPU to report its loss: only ``train_step`` rows, the bar's refresh (at
most twice a second) and the epoch's end read it.
"""

from __future__ import annotations

import time
from contextlib import closing
from typing import Optional

import torch
from torch import Tensor

from ..config import save_config
from ..log import MetricsLog, TrainingBar
from .base import HookBase
from .evaluation import EvaluationHook


class LogHook(HookBase):
    """Writes every row of ``metrics.csv`` (main process) and times the steps; the ``val`` rows
    come from ``evaluation`` (none without it)."""

    def __init__(self, evaluation: Optional[EvaluationHook] = None) -> None:
        self.evaluation = evaluation
        self.log: Optional[MetricsLog] = None
        self.bar: Optional[TrainingBar] = None
        self.t0, self.wall = 0.0, 0.0
        self.epoch_acc = [0.0, 0, 0.0]
        self.epoch_comm: Optional[list] = None

    def before_train(self) -> None:
        loop = self.loop
        if loop.env.is_main:
            save_config(loop.cfg, loop.work_dir / "config.json")
        self.log = loop.scope.enter_context(
            closing(
                MetricsLog(
                    loop.work_dir,
                    loop.env.is_main,
                    loop.cfg.tensorboard,
                    loop.step if loop.cfg.resume else None,
                )
            )
        )

    def before_epoch(self) -> None:
        loop = self.loop
        if self.epoch_comm is None:  # a fresh epoch (a resumed one keeps the saved counts)
            self.epoch_comm = [loop.sync_comm.syncs, loop.sync_comm.bytes]
        self.bar = loop.epoch_scope.enter_context(
            TrainingBar(
                loop.steps_in_epoch - loop.step_in_epoch,
                loop.cfg.progress and loop.env.is_main,
                f"epoch {loop.epoch + 1}/{loop.epochs}",
            )
        )
        self.t0 = time.perf_counter()

    def after_step(self) -> None:
        loop, cfg = self.loop, self.loop.cfg
        clips = len(loop.batch[1])
        dt = time.perf_counter() - self.t0
        self.t0 = time.perf_counter()
        self.wall += dt
        acc = self.epoch_acc  # the loss sum stays on the device: no wait for the GPU a step
        self.epoch_acc = [acc[0] + loop.loss.detach().double() * clips, acc[1] + clips, acc[2] + dt]
        self.bar.update(loop.loss, loop.lr, clips * loop.env.world_size / max(dt, 1e-9))
        if cfg.log_every and loop.step % cfg.log_every == 0:
            self.log.write(
                epoch=loop.epoch,
                step=loop.step,
                split="train_step",
                loss=self._mean_loss(loop.loss),
                lr=loop.lr,
                wall_s=self.wall,
            )

    def after_epoch(self) -> None:
        loop = self.loop
        acc = torch.stack(
            [
                torch.as_tensor(v, dtype=torch.float64, device=loop.device)
                for v in self.epoch_acc[:2]
            ]
        )
        loop.metric_comm.all_reduce_(acc, "sum")
        loss, clips = float(acc[0] / max(acc[1], 1)), int(acc[1])
        syncs, nbytes = loop.sync_comm.syncs, loop.sync_comm.bytes
        self.log.write(
            epoch=loop.epoch - 1,
            step=loop.step,
            split="train",
            loss=loss,
            lr=loop.lr,
            clips_per_s=clips / max(self.epoch_acc[2], 1e-9),
            wall_s=self.wall,
            syncs=syncs - self.epoch_comm[0],
            sync_bytes=nbytes - self.epoch_comm[1],
        )
        self.epoch_acc, self.epoch_comm = [0.0, 0, 0.0], None
        val = self.evaluation.epoch_val if self.evaluation is not None else {}
        if val:
            self.log.write(
                epoch=loop.epoch - 1, step=loop.step, split="val", **val, wall_s=self.wall
            )

    def _mean_loss(self, loss: Tensor) -> float:
        return float(self.loop.metric_comm.all_reduce_(loss.float().clone().view(1), "mean").item())

    def state_dict(self) -> dict:
        comm = self.epoch_comm or [self.loop.sync_comm.syncs, self.loop.sync_comm.bytes]
        acc = self.epoch_acc
        return {
            "wall_s": self.wall,
            "epoch_acc": [float(acc[0]), acc[1], acc[2]],
            "epoch_comm": list(comm),
        }

    def load_state_dict(self, state: dict) -> None:
        self.wall, self.epoch_acc = state["wall_s"], list(state["epoch_acc"])
        self.epoch_comm = list(state["epoch_comm"]) if "epoch_comm" in state else None

    def summary(self) -> dict:
        return {"wall_s": self.wall}
