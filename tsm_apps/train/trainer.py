"""The training loop: one process of a (possibly distributed) run, resumable at any step.

Synchronous mode wraps the recognizer in ``DistributedDataParallel`` (gradients all-reduced
every step). ``averaging.method = "kavg"`` trains without DDP and averages the models every
``k`` steps (:mod:`tsm_apps.train.averaging`). Every step reseeds the global RNG from
``(seed, rank, step)`` and every clip's augmentation is seeded by ``(seed, epoch, index)``,
so a resumed run repeats the uninterrupted one exactly.

Files in ``work_dir``: ``last.pth`` (every epoch, every ``checkpoint_every`` steps, on
SIGTERM), ``best.pth`` (best val top-1), ``config.json``, ``metrics.csv``, ``tb/``.
"""
from __future__ import annotations

import json
import os
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Optional

import torch
from torch import Tensor, nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset

from ..checkpoint import load_weights, read_checkpoint, save_checkpoint
from ..recognizer import Recognizer, build_recognizer
from .averaging import AdaptiveBatch, KStepAverager, merge_bn_
from .config import TrainConfig, save_config
from .distributed import CommCounter, DistEnv
from .log import MetricsLog, Progress
from .metrics import classification_report, confusion_matrix, topk_correct
from .multigrid import MultigridSchedule
from .recipe import LRSchedule, build_optimizer, freeze_bn_parameters, scaled_lr, set_lr, set_train_mode
from .sampler import EpochBatches, FixedShape, eval_batches
from .state import rng_state, set_rng_state, stop_on_sigterm


def step_seed(seed: int, rank: int, step: int) -> int:
    return ((seed * 1_000_003 + rank) * 1_000_003 + step) % (2 ** 63)


class Trainer:
    """Builds model, optimizer and batch plan from ``cfg``; ``fit()`` runs to the last epoch."""

    def __init__(self, cfg: TrainConfig, env: DistEnv, device: torch.device,
                 train_set: Dataset, val_set: Dataset, num_classes: int,
                 meta: Optional[dict] = None) -> None:
        if cfg.batch_size % env.world_size or cfg.batch_size // env.world_size < cfg.accum_steps:
            raise ValueError(f"batch_size {cfg.batch_size} must split into {env.world_size} "
                             f"process(es) x {cfg.accum_steps} micro-batch(es) of >= 1 clip")
        self.cfg, self.env, self.device = cfg, env, device
        self.train_set, self.val_set = train_set, val_set
        self.work_dir = Path(cfg.work_dir)
        self.meta = dict(meta or {})
        self.kavg = cfg.averaging.method == "kavg"
        self.sync, self.comm_metrics = CommCounter(), CommCounter()
        self.model = self._build_model(num_classes)
        lr = scaled_lr(cfg.lr_per_8, cfg.batch_size)
        self.schedule = LRSchedule(lr, cfg.epochs, cfg.warmup_epochs, cfg.warmup_start,
                                   cfg.min_lr_ratio)
        self.optimizer = build_optimizer(self.model, cfg.optimizer, lr, cfg.momentum,
                                         cfg.weight_decay,
                                         cfg.fc_lr_mult if cfg.pretrained else 1.0)
        self.scaler = torch.amp.GradScaler("cuda", enabled=self.amp)
        self.net = self._wrap(self.model)
        per_rank = cfg.batch_size // env.world_size
        self.plan = (MultigridSchedule(cfg.multigrid, cfg.epochs, per_rank, cfg.segments, cfg.size)
                     if cfg.multigrid.enabled else FixedShape(per_rank, cfg.segments, cfg.size))
        self.batches = EpochBatches(len(train_set), self.plan, env.world_size, env.rank, cfg.seed)
        cap = cfg.averaging.batch_cap or 4 * per_rank
        self.adaptive = AdaptiveBatch(per_rank, cfg.averaging.b1, cfg.averaging.b2, cap) \
            if self.kavg else None
        self.averager = KStepAverager(self.model, self.optimizer, cfg.averaging.k,
                                      lambda t: self.sync.all_reduce_(t, "mean")) \
            if self.kavg else None
        self.epoch, self.step_in_epoch, self.step = 0, 0, 0
        self.best_top1, self.wall = -1.0, 0.0
        self.epoch_acc = [0.0, 0, 0.0]  # loss sum, clips, train seconds (this process)
        self.last_val: dict = {}  # metrics row of the latest validation
        self.best_val: dict = {}  # eval.json content of the best validation so far

    # ----- set-up -------------------------------------------------------------------------
    @property
    def amp(self) -> bool:
        return self.cfg.amp and self.device.type == "cuda"

    def _build_model(self, num_classes: int) -> Recognizer:
        cfg = self.cfg
        torch.manual_seed(cfg.seed)  # identical initial weights on every rank
        model = build_recognizer(cfg.arch, num_classes, cfg.segments, cfg.shift_mode,
                                 cfg.fold_div, dropout=cfg.dropout, width=cfg.width,
                                 output_stride=cfg.output_stride)
        if cfg.pretrained:
            load_pretrained(model, cfg.pretrained)
        freeze_bn_parameters(model, cfg.bn)
        model.to(self.device)
        if self.device.type == "cuda" and cfg.channels_last:
            model.to(memory_format=torch.channels_last)
        return model

    def _wrap(self, model: nn.Module) -> nn.Module:
        if not self.env.distributed or self.kavg:
            return model
        ids = [self.device.index] if self.device.type == "cuda" else None
        # BN buffers stay per process (no broadcast each step); merge_bn_ pools them before
        # every evaluation and checkpoint
        ddp = DistributedDataParallel(model, device_ids=ids, broadcast_buffers=False)
        ddp.register_comm_hook(None, self.sync.ddp_hook)
        return ddp

    # ----- checkpoints --------------------------------------------------------------------
    def state(self) -> dict:
        return {"optimizer": self.optimizer.state_dict(), "scaler": self.scaler.state_dict(),
                "scheduler": {"base_lr": self.schedule.base_lr, "epochs": self.schedule.epochs,
                              "warmup_epochs": self.schedule.warmup_epochs},
                "epoch": self.epoch, "step_in_epoch": self.step_in_epoch, "step": self.step,
                "best_top1": self.best_top1, "wall_s": self.wall,
                "epoch_acc": list(self.epoch_acc), "rng": rng_state(),
                "comm": {"sync": self.sync.state_dict(), "metrics": self.comm_metrics.state_dict()},
                "adaptive": self.adaptive.state_dict() if self.adaptive else {}}

    def save(self, name: str) -> None:
        if self.env.is_main:
            meta = dict(self.meta, train_config=self.cfg.to_dict(), val=dict(self.last_val),
                        best_val=dict(self.best_val))
            save_checkpoint(self.work_dir / name, self.model, meta=meta, **self.state())

    def resume(self) -> bool:
        """Restore from ``last.pth`` if present (a fresh start otherwise, as torchrun restarts)."""
        path = self.work_dir / "last.pth"
        if not path.is_file():
            return False
        ck = read_checkpoint(path)
        self.model.load_state_dict(ck["state_dict"])
        self.optimizer.load_state_dict(ck["optimizer"])
        self.scaler.load_state_dict(ck["scaler"])
        self.epoch, self.step_in_epoch, self.step = ck["epoch"], ck["step_in_epoch"], ck["step"]
        self.best_top1, self.wall = ck["best_top1"], ck["wall_s"]
        self.epoch_acc = list(ck["epoch_acc"])
        self.sync.load_state_dict(ck["comm"]["sync"])
        self.comm_metrics.load_state_dict(ck["comm"]["metrics"])
        if self.adaptive is not None:
            self.adaptive.load_state_dict(ck["adaptive"])
            self.plan.batch = self.adaptive.batch
        self.last_val = dict(ck["meta"].get("val", {}))
        self.best_val = dict(ck["meta"].get("best_val", {}))
        set_rng_state(ck["rng"])
        return True

    # ----- one step -----------------------------------------------------------------------
    def train_step(self, x: Tensor, y: Tensor) -> Tensor:
        """Forward/backward over ``accum_steps`` micro-batches, clip, update; the mean loss.

        Micro-batch ``m`` takes clips ``m, m + A, ...`` of the batch, the clips process ``m``
        of ``A`` would take, and reseeds the RNG (dropout) from ``(seed, rank * A + m, step)``,
        so ``W`` processes and one process with ``accum_steps = W`` compute the same update.
        """
        if self.model.num_segments != x.shape[1]:
            self.model.num_segments = x.shape[1]  # multigrid: same model, new T
        x, y = x.to(self.device, non_blocking=True), y.to(self.device, non_blocking=True)
        parts, n = self.cfg.accum_steps, len(y)
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

    def _stop_everywhere(self, local: bool) -> bool:
        """Whether any process was asked to stop (one tiny all-reduce when distributed)."""
        if not self.env.distributed:
            return local
        flag = torch.tensor([float(local)], device=self.device)
        return bool(self.comm_metrics.all_reduce_(flag, "sum").item() > 0)

    def _mean_loss(self, loss: Tensor) -> float:
        return float(self.comm_metrics.all_reduce_(loss.float().clone().view(1), "mean").item())

    # ----- epochs -------------------------------------------------------------------------
    def lr_at(self, epoch_float: float) -> float:
        scale = (self.plan.lr_scale(int(epoch_float), len(self.batches.sampler))
                 if isinstance(self.plan, MultigridSchedule) else 1.0)
        return self.schedule(epoch_float) * scale

    def _consolidate(self, averaged: bool = False) -> None:
        """Give every process the same model state before an evaluation or a checkpoint.

        DDP: pool the per-process BN statistics (one all-reduce). kavg: an averaging round,
        unless one just ran (``averaged``). One process: nothing to do.
        """
        if not self.env.distributed:
            return
        if self.averager is not None:
            if not averaged:
                self.averager.average()
        else:
            merge_bn_(self.model, lambda t: self.sync.all_reduce_(t, "mean"))

    def train_epoch(self, log: MetricsLog, stop) -> bool:
        """Train the rest of ``self.epoch``; False when stopped early (SIGTERM, ``max_steps``)."""
        cfg = self.cfg
        self.train_set.set_epoch(self.epoch)
        self.batches.set_epoch(self.epoch, self.step_in_epoch)
        n_steps = len(self.batches.shapes())
        loader = DataLoader(self.train_set, batch_sampler=self.batches, num_workers=cfg.workers)
        set_train_mode(self.net, cfg.bn)
        with Progress(len(self.batches), cfg.progress and self.env.is_main,
                      f"epoch {self.epoch + 1}/{cfg.epochs}") as bar:
            t0 = time.perf_counter()
            for x, y in loader:
                lr = self.lr_at(self.epoch + self.step_in_epoch / max(n_steps, 1))
                set_lr(self.optimizer, lr)
                loss = self.train_step(x, y)
                self.step_in_epoch += 1
                self.step += 1
                averaged = self.averager is not None and self.averager.after_step(
                    self.step_in_epoch, self.step_in_epoch == n_steps)
                dt = time.perf_counter() - t0
                t0 = time.perf_counter()
                self.wall += dt
                self.epoch_acc = [self.epoch_acc[0] + float(loss) * len(y),
                                  self.epoch_acc[1] + len(y), self.epoch_acc[2] + dt]
                bar.update(float(loss), lr, len(y) * self.env.world_size / max(dt, 1e-9))
                if cfg.log_every and self.step % cfg.log_every == 0:
                    log.write(epoch=self.epoch, step=self.step, split="train_step",
                              loss=self._mean_loss(loss), lr=lr, wall_s=self.wall)
                halt = bool(cfg.max_steps and self.step >= cfg.max_steps)
                # kavg looks for a stop request only when it communicates anyway
                if (halt or not self.kavg or averaged) and self._stop_everywhere(stop.requested):
                    halt = True
                if self.step_in_epoch == n_steps and not halt:
                    break  # end_epoch consolidates and saves
                if halt or (cfg.checkpoint_every and self.step % cfg.checkpoint_every == 0):
                    self._consolidate(averaged)
                    self.save("last.pth")
                if halt:
                    return False
        return True

    def end_epoch(self, log: MetricsLog) -> None:
        """Epoch train row, validation, best/last checkpoints, batch growth (kavg)."""
        self._consolidate(averaged=self.averager is not None)  # kavg: the epoch's last round
        acc = torch.tensor(self.epoch_acc[:2], dtype=torch.float64, device=self.device)
        self.comm_metrics.all_reduce_(acc, "sum")
        loss, clips = float(acc[0] / max(acc[1], 1)), int(acc[1])
        lr = self.optimizer.param_groups[0]["lr"] / self.optimizer.param_groups[0]["lr_mult"]
        log.write(epoch=self.epoch, step=self.step, split="train", loss=loss, lr=lr,
                  clips_per_s=clips / max(self.epoch_acc[2], 1e-9), wall_s=self.wall)
        self.epoch += 1
        self.step_in_epoch, self.epoch_acc = 0, [0.0, 0, 0.0]
        is_best = False
        if self.epoch % self.cfg.eval_every == 0 or self.epoch == self.cfg.epochs:
            report = self.validate()
            self.last_val = {k: report[k] for k in ("loss", "top1", "top5")}
            log.write(epoch=self.epoch - 1, step=self.step, split="val", **self.last_val,
                      wall_s=self.wall)
            is_best = self.last_val["top1"] > self.best_top1
            if is_best:
                self.best_top1 = self.last_val["top1"]
                self.best_val = dict(report, epoch=self.epoch, step=self.step)
            if self.adaptive is not None:
                self.plan.batch = self.adaptive.update(self.last_val["top1"])
        self.save("last.pth")
        if is_best:
            self.save("best.pth")

    @torch.no_grad()
    def validate(self) -> dict:
        """1-clip centre-crop evaluation of the whole val set: :func:`classification_report`."""
        model, k = self.model, self.model.config.num_classes
        model.eval()
        model.num_segments = self.cfg.segments
        sums = torch.zeros(k * k + 2, dtype=torch.float64)  # confusion, loss sum, top-5 hits
        per_rank = max(1, self.cfg.batch_size // self.env.world_size)
        for idx in eval_batches(len(self.val_set), per_rank, self.env.world_size, self.env.rank):
            items = [self.val_set[i] for i in idx]
            x = torch.stack([c for c, _ in items]).to(self.device)
            y = torch.tensor([lab for _, lab in items], device=self.device)
            with torch.autocast(self.device.type, enabled=self.amp):
                logits = model(x).float()
            sums[:k * k] += confusion_matrix(logits.argmax(1), y, k).flatten().cpu().double()
            sums[k * k] += float(nn.functional.cross_entropy(logits, y, reduction="sum"))
            sums[k * k + 1] += topk_correct(logits, y, (5,))[0]
        sums = self.comm_metrics.all_reduce_(sums.to(self.device), "sum").cpu()
        cm = sums[:k * k].round().long().view(k, k)
        return classification_report(cm, float(sums[k * k]), int(sums[k * k + 1]))

    def write_eval(self) -> Optional[Path]:
        """``eval.json``: the best validation (the model in ``best.pth``) plus the final one."""
        if not self.env.is_main or not self.best_val:
            return None
        out = dict(self.best_val, checkpoint="best.pth", classes=self.meta.get("classes", []),
                   protocol=f"1 clip x 1 centre crop, T={self.cfg.segments}, "
                            f"{self.cfg.size}x{self.cfg.size}",
                   final={"epoch": self.epoch, **self.last_val})
        path = self.work_dir / "eval.json"
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(out, indent=1))
        os.replace(tmp, path)
        return path

    def fit(self) -> dict:
        """Train to ``cfg.epochs`` (or until stopped); returns a summary dict."""
        if self.cfg.resume:
            self.resume()
        if self.env.is_main:
            save_config(self.cfg, self.work_dir / "config.json")
        log = MetricsLog(self.work_dir, self.env.is_main, self.cfg.tensorboard,
                         self.step if self.cfg.resume else None)
        stopped = False
        try:
            with stop_on_sigterm() as stop:
                while self.epoch < self.cfg.epochs and not stopped:
                    stopped = not self.train_epoch(log, stop)
                    if not stopped:
                        self.end_epoch(log)
                stopped = stopped and self.epoch < self.cfg.epochs
                signum = stop.signum
        finally:
            log.close()
        if not stopped:
            self.write_eval()
        return {"epochs": self.epoch, "steps": self.step, "stopped": stopped,
                "signal": signum if stopped else 0,
                "val_top1": self.last_val.get("top1"), "val_top5": self.last_val.get("top5"),
                "best_top1": self.best_top1, "best_epoch": self.best_val.get("epoch"),
                "wall_s": self.wall,
                "sync_allreduce_calls": self.sync.calls, "sync_allreduce_bytes": self.sync.bytes,
                "metric_allreduce_calls": self.comm_metrics.calls,
                "work_dir": str(self.work_dir)}


def load_pretrained(model: Recognizer, path: str) -> None:
    """Fine-tuning start: any known checkpoint layout; the fc stays fresh if the classes differ."""
    fc = read_checkpoint(path).get("state_dict", {}).get("fc.weight")
    same = fc is not None and tuple(fc.shape) == tuple(model.fc.weight.shape)
    load_weights(model, path, ignore=() if same else ("fc.",))
