"""The training loop: one process of a (possibly distributed) run, resumable at any step.

:class:`Trainer` runs epochs of steps (:meth:`Trainer.train_step`) and keeps the processes'
models in step (DDP, or K-step averaging rounds with ``averaging.method = "kavg"``); it saves
and restores its own state (:meth:`Trainer.state_dict`, :meth:`Trainer.resume`) and reports the
run (:meth:`Trainer.summary`). The rest is hooks, which see it only as a
:class:`~tsm_apps.train.hooks.base.Loop`. Steps reseed the RNG from ``(seed, rank, step)`` and
clips from ``(seed, epoch, index)``, so a resumed run repeats the uninterrupted one exactly.
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

from ..checkpoint.reading import read_checkpoint
from ..distributed import CommCounter, DistEnv
from .averaging import KStepAverager, merge_bn_
from .config import TrainConfig
from .graphs import GraphedNetwork, check_cuda_graphs
from .hooks import HookBase, default_hooks
from .loader import on_device, train_loader
from .model import model_and_optimizer, wrap_ddp
from .multigrid import MultigridSchedule
from .sampler import EpochBatches, FixedShape, per_process
from .solver import (
    LRSchedule,
    run_schedule,
    set_lr,
    set_train_mode,
    step_lrs,
    step_precision,
)
from .state import rng_state, set_rng_state

__all__ = ["Trainer", "step_seed"]


def step_seed(seed: int, rank: int, step: int) -> int:
    """The global RNG seed of micro-batch stream ``rank`` at ``step`` (dropout masks)."""
    return ((seed * 1_000_003 + rank) * 1_000_003 + step) % (2**63)


class Trainer:
    """Model, optimizer, batch plan and LR schedule from ``cfg``; ``fit()`` runs to the last
    epoch (``epochs``: ``cfg.optim.epochs``, times multigrid's epoch factor)."""

    def __init__(
        self,
        cfg: TrainConfig,
        env: DistEnv,
        device: torch.device,
        train_set: Dataset,
        val_set: Dataset,
        num_classes: int,
        meta: Optional[dict] = None,
        hooks: Optional[Sequence[HookBase]] = None,
    ) -> None:
        per_rank = per_process(cfg.optim.batch_size, env.world_size, cfg.optim.accum_steps)
        self.cfg, self.env, self.device, self.train_set, self.val_set = (
            cfg,
            env,
            device,
            train_set,
            val_set,
        )
        self.work_dir, self.meta = Path(cfg.work_dir), dict(meta or {})
        self.sync_comm, self.metric_comm = CommCounter(), CommCounter()
        self.model, self.optimizer = model_and_optimizer(cfg, num_classes, device, env.world_size)
        self.precision = step_precision(cfg.optim, device)  # autocast dtype, loss scaling
        self.scaler = torch.amp.GradScaler(device.type, enabled=self.precision.scale)
        kavg = cfg.averaging.method == "kavg"
        net = (
            wrap_ddp(self.model, device, self.sync_comm)
            if env.distributed and not kavg
            else self.model
        )
        self.net = (
            net
            if cfg.optim.compile == "none"
            else torch.compile(net, backend=cfg.optim.compile, mode=cfg.optim.compile_mode)
        )  # shares self.model's parameters
        check_cuda_graphs(cfg, device, env.world_size)
        self.graphs = GraphedNetwork(self.model, self.precision) if cfg.optim.cuda_graphs else None
        self.averager = (
            KStepAverager(
                self.model,
                self.optimizer,
                cfg.averaging.k,
                partial(self.sync_comm.all_reduce_, op="mean"),
            )
            if kavg
            else None
        )
        t, s = cfg.model.segments, cfg.data.size
        self.plan = (
            MultigridSchedule(cfg.multigrid, cfg.optim.epochs, per_rank, t, s)
            if cfg.multigrid.enabled
            else FixedShape(per_rank, t, s)
        )
        self.batches = EpochBatches(len(train_set), self.plan, env.world_size, env.rank, cfg.seed)
        self.epochs = self.plan.run_epochs if cfg.multigrid.enabled else cfg.optim.epochs
        self.schedule = self.lr_schedule()
        self.epoch, self.step_in_epoch, self.step, self.steps_in_epoch = 0, 0, 0, 0
        self.batch, self.loss, self.lr, self.stopped, self.bn_splits = None, None, 0.0, False, 1
        self.hooks: list = []
        self.register_hooks(self.default_hooks() if hooks is None else hooks)

    @property
    def amp(self) -> bool:
        """The step runs under autocast (``self.precision``)."""
        return self.precision.enabled

    def autocast(self) -> torch.autocast:
        """Autocast in the run's precision (``self.precision``; disabled when it is fp32)."""
        p = self.precision
        return torch.autocast(self.device.type, dtype=p.dtype, enabled=p.enabled)

    @property
    def clips(self) -> int:
        return len(self.batches.sampler)  # clips this process draws per epoch

    def lr_schedule(self) -> LRSchedule:
        """``optim.lr_policy``'s schedule over the run (multigrid's step policy: SlowFast's)."""
        cfg, policy = self.cfg, self.cfg.optim.lr_policy
        steps, lrs = step_lrs(cfg.optim.lr_steps)
        if cfg.multigrid.enabled and cfg.multigrid.lr_policy == "step":
            (steps, lrs), policy = self.plan.lr_steps(self.clips), "step"
        return run_schedule(cfg, self.env.world_size, self.epochs, policy, steps, lrs)

    def default_hooks(self) -> list:
        """:func:`~tsm_apps.train.hooks.defaults.default_hooks` of this run."""
        return default_hooks(self)

    def register_hooks(self, hooks: Sequence[HookBase]) -> None:
        """Append ``hooks`` (called in this order); each keeps a weak reference to the loop. One
        hook of a class: its class name keys its state in checkpoints."""
        for hook in hooks:
            if not isinstance(hook, HookBase):
                raise TypeError(f"hooks must be HookBase instances, got {type(hook).__name__}")
            if hook.state_key in {h.state_key for h in self.hooks}:
                raise ValueError(f"two hooks of class {hook.state_key}: register one of each")
            hook.loop = weakref.proxy(self)
            self.hooks.append(hook)

    def _call(self, event: str) -> None:
        for hook in self.hooks:
            getattr(hook, event)()

    @property
    def synced(self) -> bool:
        return self.averager is None or self.averager.synced

    def consolidate(self) -> None:
        """DDP: pool the processes' BN statistics (one all-reduce); kavg: a round, unless one
        just ran; one process: nothing."""
        if not self.env.distributed:
            return
        if self.averager is None:
            merge_bn_(self.model, partial(self.sync_comm.all_reduce_, op="mean"))
        elif not self.averager.synced:
            self.averager.average()

    def run_step(self, x: torch.Tensor, y: torch.Tensor) -> None:
        self.batch = (x, y)
        self.lr = self.schedule(
            self.epoch + self.step_in_epoch / max(self.steps_in_epoch, 1)
        ) * self.plan.lr_scale(self.epoch, self.clips)
        set_lr(self.optimizer, self.lr)
        self._call("before_step")
        with self.sync_comm.round():  # DDP: one synchronisation, one call per gradient bucket
            self.loss = self.train_step(x, y)
        self.step_in_epoch, self.step = self.step_in_epoch + 1, self.step + 1
        if self.averager is not None:  # kavg: a round every k steps and at the epoch's end
            self.averager.after_step(self.step_in_epoch, self.step_in_epoch == self.steps_in_epoch)
        self._call("after_step")

    def train_step(self, x: Tensor, y: Tensor) -> Tensor:
        """Forward/backward over ``accum_steps`` micro-batches, clip, update; the mean loss.

        ``x`` is ``(N, T, C, S, S)`` (float, or uint8 normalised on the device:
        :func:`~tsm_apps.train.loader.on_device`), ``y`` ``(N,)``. ``A = accum_steps x
        bn_splits`` (multigrid's sub-batch BN: BN groups of constant size). Micro-batch ``m``
        takes clips ``m, m + A, ...`` of the batch, the clips process ``m`` of ``A`` would take,
        and reseeds the RNG (dropout) from ``(seed, rank * A + m, step)``, so ``W`` processes and
        one process with ``accum_steps = W`` compute the same update.
        """
        x = on_device(x, self.device, self.cfg.model.modality)  # uint8 clips: normalised there
        y = y.to(self.device, non_blocking=True)
        parts, n = self.cfg.optim.accum_steps * self.bn_splits, len(y)
        if n < parts:
            raise ValueError(f"batch of {n} clips cannot be split into {parts} micro-batches")
        self.optimizer.zero_grad(set_to_none=self.graphs is None)  # graphs: zeroed in place
        total = torch.zeros((), device=self.device)
        for m in range(parts):
            xm, ym = x[m::parts], y[m::parts]
            net = self.net if self.graphs is None else self.graphs.forward_for(xm)  # captures
            torch.manual_seed(step_seed(self.cfg.seed, self.env.rank * parts + m, self.step))
            ddp = getattr(self.net, "_orig_mod", self.net)  # under torch.compile: the wrapped net
            defer = m < parts - 1 and isinstance(ddp, DistributedDataParallel)
            with ddp.no_sync() if defer else nullcontext():
                with self.autocast():
                    loss = nn.functional.cross_entropy(net(xm), ym) * (len(ym) / n)
                self.scaler.scale(loss).backward()
            total += loss.detach().float()
        if self.cfg.optim.clip_grad > 0:
            self.scaler.unscale_(self.optimizer)
            nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.optim.clip_grad)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return total

    def epoch_loader(self, **options) -> DataLoader:
        """The rest of ``self.epoch``'s batches (:func:`~tsm_apps.train.loader.train_loader`,
        ``options`` passed on)."""
        self.train_set.set_epoch(self.epoch)
        self.batches.set_epoch(self.epoch, self.step_in_epoch)
        self.steps_in_epoch = len(self.batches.shapes())
        self.bn_splits = self.plan.bn_splits(self.epoch, self.clips)
        return train_loader(
            self.train_set, self.batches, self.cfg.data.workers, self.device, **options
        )

    def run_epoch(self) -> None:
        """Train the rest of ``self.epoch``; returns early when a hook set ``stopped``."""
        loader = self.epoch_loader()
        set_train_mode(self.net, self.cfg.optim.bn)
        with ExitStack() as self.epoch_scope:
            self._call("before_epoch")
            for x, y in loader:
                self.run_step(x, y)
                if self.stopped:
                    return
        self.consolidate()  # kavg: the epoch's last step already averaged
        self.epoch, self.step_in_epoch = self.epoch + 1, 0
        self._call("after_epoch")

    def fit(self) -> dict:
        """Train to ``epochs`` (or until stopped); returns :meth:`summary`."""
        if self.cfg.resume:
            self.resume()
        with ExitStack() as self.scope:
            self._call("before_train")
            while self.epoch < self.epochs and not self.stopped:
                self.run_epoch()
        self.stopped = self.stopped and self.epoch < self.epochs
        self._call("after_train")
        return self.summary()

    def state_dict(self) -> dict:
        """Checkpoint entries of the loop itself (the hooks add theirs)."""
        s = self.schedule
        return {
            "optimizer": self.optimizer.state_dict(),
            "scaler": self.scaler.state_dict(),
            "scheduler": {
                "base_lr": s.base_lr,
                "epochs": s.epochs,
                "warmup_epochs": s.warmup_epochs,
                "policy": s.policy,
            },
            "epoch": self.epoch,
            "step_in_epoch": self.step_in_epoch,
            "step": self.step,
            "rng": rng_state(),
            "comm": {"sync": self.sync_comm.state_dict(), "metrics": self.metric_comm.state_dict()},
            "hooks": {k: v for k, v in ((h.state_key, h.state_dict()) for h in self.hooks) if v},
        }

    def resume(self) -> bool:
        """Restore from ``last.pth`` if present (a fresh start otherwise, as torchrun restarts):
        model, optimizer, scaler, counters, synchronisation counts, each hook's state, RNG."""
        path = self.work_dir / "last.pth"
        if not path.is_file():
            return False
        ck = read_checkpoint(path)
        self.model.load_state_dict(ck["state_dict"])
        self.optimizer.load_state_dict(ck["optimizer"])
        if ck["scaler"]:  # a run without loss scaling saved none: this one's starts afresh
            self.scaler.load_state_dict(ck["scaler"])
        self.epoch, self.step_in_epoch, self.step = ck["epoch"], ck["step_in_epoch"], ck["step"]
        self.sync_comm.load_state_dict(ck["comm"]["sync"])
        self.metric_comm.load_state_dict(ck["comm"]["metrics"])
        # checkpoints written before hooks had their own entries hold them at the top level
        states = ck["hooks"] if "hooks" in ck else {h.state_key: ck for h in self.hooks}
        for hook in self.hooks:
            if hook.state_key in states:
                hook.load_state_dict(states[hook.state_key])
        set_rng_state(ck["rng"])
        return True

    def summary(self) -> dict:
        """The run's summary once it ended: the defaults, then each hook's entries, then the
        loop's counters and all-reduce totals (``signal`` only when the run was stopped early)."""
        out = dict(
            signal=0, val_top1=None, val_top5=None, best_top1=-1.0, best_epoch=None, wall_s=0.0
        )
        for hook in self.hooks:
            out.update(hook.summary())
        sync, metric = self.sync_comm, self.metric_comm
        return dict(
            out,
            epochs=self.epoch,
            steps=self.step,
            stopped=self.stopped,
            signal=out["signal"] if self.stopped else 0,
            syncs=sync.syncs,
            sync_allreduce_calls=sync.calls,
            sync_allreduce_bytes=sync.bytes,
            metric_allreduce_calls=metric.calls,
            work_dir=str(self.work_dir),
        )
