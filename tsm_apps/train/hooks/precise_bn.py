"""Precise BN after every epoch, before validation and checkpoints (SlowFast's multigrid recipe).

SlowFast recomputes the BN statistics on every epoch that is validated or checkpointed
(``tools/train_net.py`` 698-709; its multigrid config checkpoints every epoch), over
``BN.NUM_BATCHES_PRECISE`` training batches (fewer when the epoch has fewer) drawn without the
short cycle (``datasets/loader.py`` 126): the epoch's long-cycle shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from itertools import islice
from typing import Any

from ..averaging import merge_bn_
from ..loader import on_device, train_loader
from ..precise_bn import precise_bn_
from ..sampler import EpochBatches
from ..solver import set_train_mode
from .base import HookBase


@dataclass
class LongCycle:
    """A batch plan whose batches all have the plan's long-cycle shape (no short cycle)."""

    plan: Any

    def batches(self, epoch: int, num_clips: int) -> list:
        return self.plan.long_batches(epoch, num_clips)


class PreciseBNHook(HookBase):
    """Recomputes the BN statistics (:func:`~tsm_apps.train.precise_bn.precise_bn_`) over
    ``cfg.optim.precise_bn_batches`` batches of ``train_set`` at the finished epoch's long-cycle
    shape, each split into the training's BN groups (``accum_steps x bn_splits`` micro-batches, as
    :meth:`~tsm_apps.train.trainer.Trainer.train_step` splits it); with several processes the statistics
    are then pooled across them (:func:`~tsm_apps.train.averaging.merge_bn_`)."""

    def __init__(self, train_set) -> None:
        self.train_set = train_set

    def after_epoch(self) -> None:
        loop = self.loop
        cfg, epoch, model = loop.cfg, loop.epoch - 1, loop.model
        batches = EpochBatches(
            len(self.train_set), LongCycle(loop.plan), loop.env.world_size, loop.env.rank, cfg.seed
        )
        batches.set_epoch(epoch)
        parts = cfg.optim.accum_steps * loop.plan.bn_splits(epoch, len(batches.sampler))
        loader = train_loader(self.train_set, batches, cfg.data.workers, loop.device)

        def micro_batches():
            for x, _ in islice(loader, cfg.optim.precise_bn_batches):
                x = on_device(x, loop.device, cfg.model.modality)  # (N, T, C, S, S)
                model.num_segments = x.shape[1]
                yield from (x[m::parts] for m in range(parts))

        set_train_mode(model, cfg.optim.bn)
        with loop.autocast():
            precise_bn_(model, micro_batches())
        if loop.env.distributed:
            merge_bn_(model, partial(loop.sync_comm.all_reduce_, op="mean"))
