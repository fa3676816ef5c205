"""Validation after every ``eval_every`` epochs (and the last), best tracking, ``eval.json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import torch
from torch import nn

from ...evaluation.metrics import classification_report, confusion_matrix, topk_correct
from ...io import atomic_write_text
from ..sampler import eval_batches
from .base import HookBase


class EvaluationHook(HookBase):
    """Validates ``val_set``; keeps the validations: ``epoch_val`` (this epoch's ``loss`` /
    ``top1`` / ``top5``, empty when the epoch was not validated), ``last_val``, ``best_val``
    (the best report, with its epoch and step), ``best_top1`` and ``new_best`` (this epoch
    improved on the best); writes ``eval.json`` when the run finishes."""

    def __init__(self, val_set) -> None:
        self.val_set = val_set
        self.epoch_val: dict = {}
        self.last_val: dict = {}
        self.best_val: dict = {}
        self.best_top1 = -1.0
        self.new_best = False

    def before_epoch(self) -> None:
        self.epoch_val, self.new_best = {}, False

    def after_epoch(self) -> None:
        loop = self.loop
        if loop.epoch % loop.cfg.eval_every and loop.epoch != loop.epochs:
            return
        report = self.validate()
        self.last_val = self.epoch_val = {k: report[k] for k in ("loss", "top1", "top5")}
        if self.last_val["top1"] > self.best_top1:
            self.best_top1, self.new_best = self.last_val["top1"], True
            self.best_val = dict(report, epoch=loop.epoch, step=loop.step)

    def after_train(self) -> None:
        if not self.loop.stopped:
            self.write_eval()

    @torch.no_grad()
    def validate(self) -> dict:
        """1-clip centre-crop evaluation of the whole val set: :func:`classification_report`."""
        loop = self.loop
        model, k = loop.model, loop.model.config.num_classes
        model.eval()
        model.num_segments = loop.cfg.model.segments
        sums = torch.zeros(k * k + 2, dtype=torch.float64)  # confusion, loss sum, top-5 hits
        per_rank = max(1, loop.cfg.optim.batch_size // loop.env.world_size)
        for idx in eval_batches(len(self.val_set), per_rank, loop.env.world_size, loop.env.rank):
            items = [self.val_set[i] for i in idx]
            x = torch.stack([c for c, _ in items]).to(loop.device)
            y = torch.tensor([lab for _, lab in items], device=loop.device)
            with loop.autocast():
                logits = model(x).float()
            sums[: k * k] += confusion_matrix(logits.argmax(1), y, k).flatten().cpu().double()
            sums[k * k] += float(nn.functional.cross_entropy(logits, y, reduction="sum"))
            sums[k * k + 1] += topk_correct(logits, y, (5,))[0]
        sums = loop.metric_comm.all_reduce_(sums.to(loop.device), "sum").cpu()
        cm = sums[: k * k].round().long().view(k, k)
        return classification_report(cm, float(sums[k * k]), int(sums[k * k + 1]))

    def write_eval(self) -> Optional[Path]:
        """``eval.json``: the best validation (the model in ``best.pth``) plus the final one."""
        loop = self.loop
        if not loop.env.is_main or not self.best_val:
            return None
        out = dict(
            self.best_val,
            checkpoint="best.pth",
            classes=loop.meta.get("classes", []),
            protocol=f"1 clip x 1 centre crop, T={loop.cfg.model.segments}, "
            f"{loop.cfg.data.size}x{loop.cfg.data.size}",
            final={"epoch": loop.epoch, **self.last_val},
        )
        return atomic_write_text(loop.work_dir / "eval.json", json.dumps(out, indent=1))

    def state_dict(self) -> dict:
        return {
            "best_top1": self.best_top1,
            "meta": {"val": dict(self.last_val), "best_val": dict(self.best_val)},
        }

    def load_state_dict(self, state: dict) -> None:
        self.best_top1 = state["best_top1"]
        self.last_val = dict(state["meta"].get("val", {}))
        self.best_val = dict(state["meta"].get("best_val", {}))

    def summary(self) -> dict:
        return {
            "val_top1": self.last_val.get("top1"),
            "val_top5": self.last_val.get("top5"),
            "best_top1": self.best_top1,
            "best_epoch": self.best_val.get("epoch"),
        }
