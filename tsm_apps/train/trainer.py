"""The training loop: one process of a (possibly distributed) run, resumable at any step.

:class:`Trainer` runs epochs of steps; the rest is hooks (:mod:`tsm_apps.train.hooks`).
Synchronous mode wraps the recognizer in ``DistributedDataParallel``; ``averaging.method =
"kavg"`` trains without DDP and averages the models every ``k`` steps. Every step reseeds the
global RNG from ``(seed, rank, step)`` and every clip's augmentation is seeded by ``(seed,
epoch, index)``, so a resumed run repeats the uninterrupted one exactly.
"""
from __future__ import annotations

import weakref
from contextlib import ExitStack, nullcontext
from functools import partial
from pathlib import Path
from typing import Optional, Sequence

import torch
from torch import Tensor, nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset

from .averaging import KStepAverager
from .config import TrainConfig
from ..distributed import CommCounter, DistEnv
from .hooks import (AveragingHook, CheckpointHook, EvaluationHook, HookBase, LogHook,
                    MultigridHook)
from .hooks.averaging import consolidate
from .hooks.checkpoint import resume
from .model import build_model, load_pretrained, wrap_ddp
from .multigrid import MultigridSchedule
from .recipe import LRSchedule, build_optimizer, scaled_lr, set_lr, set_train_mode
from .sampler import EpochBatches, FixedShape

__all__ = ["Trainer", "load_pretrained", "step_seed"]


def step_seed(seed: int, rank: int, step: int) -> int:
    """The global RNG seed of micro-batch stream ``rank`` at ``step`` (dropout masks)."""
    return ((seed * 1_000_003 + rank) * 1_000_003 + step) % (2 ** 63)


class Trainer:
    """Model, optimizer and batch plan from ``cfg``; ``fit()`` runs to the last epoch.

    Hooks share the run state: ``epoch``, ``step_in_epoch``, ``step``, ``steps_in_epoch``; per
    step ``batch``, ``lr``, ``loss``, ``averaged``; ``wall``, ``epoch_acc``, ``lr_scale``,
    ``last_val``, ``best_val``, ``best_top1``; per epoch ``epoch_val``, ``new_best``; ``stopped``.
    """

    def __init__(self, cfg: TrainConfig, env: DistEnv, device: torch.device,
                 train_set: Dataset, val_set: Dataset, num_classes: int,
                 meta: Optional[dict] = None, hooks: Optional[Sequence[HookBase]] = None) -> None:
        if cfg.batch_size % env.world_size or cfg.batch_size // env.world_size < cfg.accum_steps:
            raise ValueError(f"batch_size {cfg.batch_size} must split into {env.world_size} "
                             f"process(es) x {cfg.accum_steps} micro-batch(es) of >= 1 clip")
        self.cfg, self.env, self.device = cfg, env, device
        self.train_set, self.val_set = train_set, val_set
        self.work_dir = Path(cfg.work_dir)
        self.meta = dict(meta or {})
        self.kavg = cfg.averaging.method == "kavg"
        self.sync, self.comm_metrics = CommCounter(), CommCounter()
        self.sync_mean = partial(self.sync.all_reduce_, op="mean")  # the models' all-reduces
        self.model = build_model(cfg, num_classes, device)
        lr = scaled_lr(cfg.lr_per_8, cfg.batch_size)
        self.schedule = LRSchedule(lr, cfg.epochs, cfg.warmup_epochs, cfg.warmup_start,
                                   cfg.min_lr_ratio)
        self.optimizer = build_optimizer(self.model, cfg.optimizer, lr, cfg.momentum,
                                         cfg.weight_decay,
                                         cfg.fc_lr_mult if cfg.pretrained else 1.0)
        self.scaler = torch.amp.GradScaler("cuda", enabled=self.amp)
        self.net = (wrap_ddp(self.model, device, self.sync)
                    if env.distributed and not self.kavg else self.model)
        per_rank = cfg.batch_size // env.world_size
        self.plan = (MultigridSchedule(cfg.multigrid, cfg.epochs, per_rank, cfg.segments, cfg.size)
                     if cfg.multigrid.enabled else FixedShape(per_rank, cfg.segments, cfg.size))
        self.batches = EpochBatches(len(train_set), self.plan, env.world_size, env.rank, cfg.seed)
        self.averager = (KStepAverager(self.model, self.optimizer, cfg.averaging.k, self.sync_mean)
                         if self.kavg else None)
        self.epoch, self.step_in_epoch, self.step, self.steps_in_epoch = 0, 0, 0, 0
        self.best_top1, self.wall, self.lr_scale = -1.0, 0.0, 1.0
        self.epoch_acc = [0.0, 0, 0.0]  # loss sum, clips, train seconds (this process)
        self.last_val, self.best_val = {}, {}  # latest validation row; best eval.json content
        self.epoch_val, self.new_best = {}, False
        self.stopped, self.signum, self.averaged = False, 0, False
        self.bn_splits = 1  # sub-batch BN groups per process step (multigrid sets it)
        self.hooks: list = []
        self.register_hooks(self.default_hooks() if hooks is None else hooks)

    @property
    def amp(self) -> bool:
        return self.cfg.amp and self.device.type == "cuda"

    def default_hooks(self) -> list:
        """Multigrid (if enabled), evaluation, K-step averaging (kavg), log, checkpoint.

        The order matters: the adaptive batch and the val row need the epoch's validation, a
        step's time includes its averaging round, and checkpoints save what the others updated.
        """
        cfg = self.cfg
        hooks = [MultigridHook()] if cfg.multigrid.enabled else []
        hooks.append(EvaluationHook())
        if self.kavg:
            hooks.append(AveragingHook(cfg.averaging, cfg.batch_size // self.env.world_size))
        return hooks + [LogHook(), CheckpointHook()]

    def register_hooks(self, hooks: Sequence[HookBase]) -> None:
        """Append ``hooks`` (called in this order); each keeps a weak reference to the trainer."""
        for hook in hooks:
            if not isinstance(hook, HookBase):
                raise TypeError(f"hooks must be HookBase instances, got {type(hook).__name__}")
            hook.trainer = weakref.proxy(self)
        self.hooks.extend(hooks)

    def _call(self, event: str) -> None:
        for hook in self.hooks:
            getattr(hook, event)()

    def train_step(self, x: Tensor, y: Tensor) -> Tensor:
        """Forward/backward over ``accum_steps`` micro-batches, clip, update; the mean loss.

        ``A = accum_steps x bn_splits`` (multigrid's sub-batch BN: BN groups of constant size).
        Micro-batch ``m`` takes clips ``m, m + A, ...`` of the batch, the clips process ``m`` of
        ``A`` would take, and reseeds the RNG (dropout) from ``(seed, rank * A + m, step)``,
        so ``W`` processes and one process with ``accum_steps = W`` compute the same update.
        """
        x, y = x.to(self.device, non_blocking=True), y.to(self.device, non_blocking=True)
        parts, n = self.cfg.accum_steps * self.bn_splits, len(y)
        if n < parts:
            raise ValueError(f"batch of {n} clips cannot be split into {parts} micro-batches")
        self.optimizer.zero_grad(set_to_none=True)
        total = torch.zeros((), device=self.device)
        for m in range(parts):
            xm, ym = x[m::parts], y[m::parts]
            torch.manual_seed(step_seed(self.cfg.seed, self.env.rank * parts + m, self.step))
            defer = m < parts - 1 and isinstance(self.net, DistributedDataParallel)
            with self.net.no_sync() if defer else nullcontext():
                with torch.autocast(self.device.type, enabled=self.amp):
                    loss = nn.functional.cross_entropy(self.net(xm), ym) * (len(ym) / n)
                self.scaler.scale(loss).backward()
            total += loss.detach().float()
        if self.cfg.clip_grad > 0:
            self.scaler.unscale_(self.optimizer)
            nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.clip_grad)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return total

    def run_step(self, x: Tensor, y: Tensor) -> None:
        self.batch = (x, y)
        epoch_float = self.epoch + self.step_in_epoch / max(self.steps_in_epoch, 1)
        self.lr = self.schedule(epoch_float) * self.lr_scale  # multigrid's scale, else 1
        set_lr(self.optimizer, self.lr)
        self._call("before_step")
        self.loss = self.train_step(x, y)
        self.step_in_epoch += 1
        self.step += 1
        self.averaged = False
        self._call("after_step")

    def run_epoch(self) -> None:
        """Train the rest of ``self.epoch``; returns early when a hook set ``stopped``."""
        self.train_set.set_epoch(self.epoch)
        self.batches.set_epoch(self.epoch, self.step_in_epoch)
        self.steps_in_epoch = len(self.batches.shapes())
        loader = DataLoader(self.train_set, batch_sampler=self.batches,
                            num_workers=self.cfg.workers)
        set_train_mode(self.net, self.cfg.bn)
        with ExitStack() as self.epoch_scope:
            self._call("before_epoch")
            for x, y in loader:
                self.run_step(x, y)
                if self.stopped:
                    return
        consolidate(self, averaged=self.averager is not None)  # kavg: the epoch's last round
        self.epoch_totals, self.epoch_acc = self.epoch_acc, [0.0, 0, 0.0]
        self.epoch, self.step_in_epoch = self.epoch + 1, 0
        self.epoch_val, self.new_best = {}, False
        self._call("after_epoch")

    def fit(self) -> dict:
        """Train to ``cfg.epochs`` (or until stopped); returns a summary dict."""
        if self.cfg.resume:
            resume(self)
        with ExitStack() as self.scope:
            self._call("before_train")
            while self.epoch < self.cfg.epochs and not self.stopped:
                self.run_epoch()
        self.stopped = self.stopped and self.epoch < self.cfg.epochs
        self._call("after_train")
        return {"epochs": self.epoch, "steps": self.step, "stopped": self.stopped,
                "signal": self.signum if self.stopped else 0, "val_top1": self.last_val.get("top1"),
                "val_top5": self.last_val.get("top5"), "best_top1": self.best_top1,
                "best_epoch": self.best_val.get("epoch"), "wall_s": self.wall,
                "sync_allreduce_calls": self.sync.calls, "sync_allreduce_bytes": self.sync.bytes,
                "metric_allreduce_calls": self.comm_metrics.calls, "work_dir": str(self.work_dir)}
