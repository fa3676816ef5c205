"""Algorithm 1's adaptive batch for K-step averaging (:mod:`tsm_apps.train.averaging` holds the
maths; the loop runs the averaging rounds, as it runs DDP's all-reduces)."""

from __future__ import annotations

from ..averaging import AdaptiveBatch, AveragingConfig
from .base import HookBase
from .evaluation import EvaluationHook


class AveragingHook(HookBase):
    """Grows the batch plan's per-process ``batch`` (:class:`AdaptiveBatch`) after each
    validation of ``evaluation``; ``batch_cap`` 0 means 4x the starting batch."""

    def __init__(self, cfg: AveragingConfig, batch: int, evaluation: EvaluationHook) -> None:
        self.adaptive = AdaptiveBatch(
            batch, cfg.b1, cfg.b2, cfg.batch_cap or 4 * batch, cfg.adaptive_rule
        )
        self.evaluation = evaluation

    def after_epoch(self) -> None:
        if self.evaluation.epoch_val:
            self.loop.plan.batch = self.adaptive.update(self.evaluation.epoch_val["top1"])

    def state_dict(self) -> dict:
        return {"adaptive": self.adaptive.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        self.adaptive.load_state_dict(state["adaptive"])
        self.loop.plan.batch = self.adaptive.batch
