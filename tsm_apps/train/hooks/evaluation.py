"""Validation after every ``eval_every`` epochs (and the last), best tracking, ``eval.json``."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import torch
from torch import nn

from ...io import atomic_write_text
from ...evaluation.metrics import classification_report, confusion_matrix, topk_correct
from ..sampler import eval_batches
from .base import HookBase


class EvaluationHook(HookBase):
    """Sets ``trainer.epoch_val`` (this epoch's ``loss``/``top1``/``top5``), ``last_val``,
    ``best_top1``, ``best_val`` and ``new_best``; writes ``eval.json`` when the run finishes."""

    def after_epoch(self) -> None:
        t, cfg = self.trainer, self.trainer.cfg
        if t.epoch % cfg.eval_every and t.epoch != cfg.epochs:
            return
        report = self.validate()
        t.last_val = t.epoch_val = {k: report[k] for k in ("loss", "top1", "top5")}
        if t.last_val["top1"] > t.best_top1:
            t.best_top1, t.new_best = t.last_val["top1"], True
            t.best_val = dict(report, epoch=t.epoch, step=t.step)

    def after_train(self) -> None:
        if not self.trainer.stopped:
            self.write_eval()

    @torch.no_grad()
    def validate(self) -> dict:
        """1-clip centre-crop evaluation of the whole val set: :func:`classification_report`."""
        t = self.trainer
        model, k = t.model, t.model.config.num_classes
        model.eval()
        model.num_segments = t.cfg.segments
        sums = torch.zeros(k * k + 2, dtype=torch.float64)  # confusion, loss sum, top-5 hits
        per_rank = max(1, t.cfg.batch_size // t.env.world_size)
        for idx in eval_batches(len(t.val_set), per_rank, t.env.world_size, t.env.rank):
            items = [t.val_set[i] for i in idx]
            x = torch.stack([c for c, _ in items]).to(t.device)
            y = torch.tensor([lab for _, lab in items], device=t.device)
            with torch.autocast(t.device.type, enabled=t.amp):
                logits = model(x).float()
            sums[:k * k] += confusion_matrix(logits.argmax(1), y, k).flatten().cpu().double()
            sums[k * k] += float(nn.functional.cross_entropy(logits, y, reduction="sum"))
            sums[k * k + 1] += topk_correct(logits, y, (5,))[0]
        sums = t.comm_metrics.all_reduce_(sums.to(t.device), "sum").cpu()
        cm = sums[:k * k].round().long().view(k, k)
        return classification_report(cm, float(sums[k * k]), int(sums[k * k + 1]))

    def write_eval(self) -> Optional[Path]:
        """``eval.json``: the best validation (the model in ``best.pth``) plus the final one."""
        t = self.trainer
        if not t.env.is_main or not t.best_val:
            return None
        out = dict(t.best_val, checkpoint="best.pth", classes=t.meta.get("classes", []),
                   protocol=f"1 clip x 1 centre crop, T={t.cfg.segments}, "
                            f"{t.cfg.size}x{t.cfg.size}",
                   final={"epoch": t.epoch, **t.last_val})
        return atomic_write_text(t.work_dir / "eval.json", json.dumps(out, indent=1))
