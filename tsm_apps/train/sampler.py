"""Batches of clip requests ``(index, T, S)`` for one process, resumable mid-epoch.

The epoch's order is ``torch.utils.data.DistributedSampler``'s (shuffled with ``seed + epoch``,
rank ``r`` of ``W`` takes every ``W``-th index), so ``W`` processes with ``B / W`` clips each
see, batch by batch, exactly the clips one process with ``B`` clips sees. A *plan* gives the
shape of each batch, ``(clips per process, T, S)``: fixed, or multigrid's varying shapes.
Incomplete trailing batches are dropped so every process makes the same number of steps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Protocol

from torch.utils.data import DistributedSampler, Sampler


class BatchPlan(Protocol):
    batch: int  # clips per process at the base shape

    def batches(self, epoch: int, num_clips: int) -> list:
        """Shapes ``[(clips per process, T, S), ...]`` covering at most ``num_clips`` clips."""

    def lr_scale(self, epoch: int, num_clips: int) -> float:
        """Multiplier of the epoch's learning rate."""

    def bn_splits(self, epoch: int, num_clips: int) -> int:
        """Micro-batches per step so that a BN group keeps its size."""

    def long_batches(self, epoch: int, num_clips: int) -> list:
        """Like :meth:`batches`, every batch at the epoch's long-cycle shape (no short cycle)."""


@dataclass
class FixedShape:
    """Every batch ``batch`` clips of ``T = segments`` frames at ``S = size`` pixels."""

    batch: int
    segments: int
    size: int

    def batches(self, epoch: int, num_clips: int) -> list:
        if self.batch < 1:
            raise ValueError(f"batch per process must be >= 1, got {self.batch}")
        return [(self.batch, self.segments, self.size)] * (num_clips // self.batch)

    def lr_scale(self, epoch: int, num_clips: int) -> float:
        return 1.0

    long_batches = batches  # one shape: the long cycle's

    def bn_splits(self, epoch: int, num_clips: int) -> int:
        return 1


class EpochBatches(Sampler):
    """Batch sampler yielding lists of ``(index, T, S)``; ``set_epoch(e, skip)`` resumes."""

    def __init__(
        self,
        num_items: int,
        plan: BatchPlan,
        world_size: int = 1,
        rank: int = 0,
        seed: int = 0,
        shuffle: bool = True,
    ) -> None:
        if num_items < world_size:
            raise ValueError(f"{num_items} clips cannot be split over {world_size} processes")
        self.sampler = DistributedSampler(
            range(num_items),
            num_replicas=world_size,
            rank=rank,
            shuffle=shuffle,
            seed=seed,
            drop_last=True,
        )
        self.plan = plan
        self.epoch, self.skip = 0, 0

    def set_epoch(self, epoch: int, skip: int = 0) -> None:
        """Select the epoch's order; the first ``skip`` batches are left out (resume)."""
        self.sampler.set_epoch(epoch)
        self.epoch, self.skip = epoch, skip

    def shapes(self) -> list:
        return self.plan.batches(self.epoch, len(self.sampler))

    def __len__(self) -> int:
        return max(len(self.shapes()) - self.skip, 0)

    def __iter__(self) -> Iterator[list]:
        order = list(self.sampler)
        pos = 0
        for i, (b, t, s) in enumerate(self.shapes()):
            if i >= self.skip:
                yield [(j, t, s) for j in order[pos : pos + b]]
            pos += b


def per_process(batch_size: int, world_size: int, accum_steps: int = 1) -> int:
    """Clips per process of a global ``batch_size``; ``ValueError`` unless it splits into
    ``world_size`` processes x ``accum_steps`` micro-batches of at least one clip."""
    if batch_size % world_size or batch_size // world_size < accum_steps:
        raise ValueError(
            f"batch_size {batch_size} must split into {world_size} process(es) x "
            f"{accum_steps} micro-batch(es) of >= 1 clip"
        )
    return batch_size // world_size


def eval_batches(num_items: int, batch: int, world_size: int = 1, rank: int = 0) -> list:
    """Every item once over all processes (rank ``r`` takes ``r, r+W, ...``), in batches."""
    mine = list(range(rank, num_items, world_size))
    return [mine[i : i + batch] for i in range(0, len(mine), batch)]
