"""A torch Dataset of TSN-sampled clips from video files or frame folders.

``VideoDataset[i]`` returns ``(clip, label)``: ``clip`` float ``(T, 3, H, W)``, or
``(K*T, 3, H, W)`` for ``K`` test clips and/or crops (the ``T`` frames of one clip contiguous).
Every item draws its randomness (segment offsets, crop, flip) from a generator seeded by
``(seed, epoch, index)``: the same item is the same clip whatever worker or resume point asks.

Bad videos. ``on_error='raise'`` (default) lets :class:`VideoDecodeError` propagate.
``on_error='skip'`` logs a warning, records ``(index, path, reason)`` in :attr:`skipped` and
returns ``None`` for that item -- never another video in its place. Use
:func:`collate_skip_none` as the DataLoader's ``collate_fn``: it drops the ``None`` items and
returns ``None`` when a whole batch was skipped, which the training loop must then skip. With
``num_workers > 0`` each worker holds its own :attr:`skipped` list; the log lines are the record
that crosses processes.
"""
from __future__ import annotations

import logging
from typing import Callable, Optional, Sequence

import numpy as np
import torch
from torch.utils.data import Dataset, default_collate

from .lists import VideoRecord
from .sampling import DENSE_WINDOW, Sampler, make_sampler
from .transforms import ToTensor
from .video import DEFAULT_START_INDEX, VideoDecodeError, read_video_frames

log = logging.getLogger(__name__)

__all__ = ["VideoDataset", "collate_skip_none"]


class VideoDataset(Dataset):
    """Clips of ``records`` (:class:`VideoRecord`: path, num_frames, label).

    ``mode``: ``'train'`` (random offsets), ``'val'`` (segment centres) or ``'test'`` (segment
    centres; ``twice``, ``num_clips > 1`` or ``dense`` for several clips). ``transform``:
    ``(uint8 (N, H, W, 3), rng) -> float (N', 3, H, W)`` (default: :class:`ToTensor` only).
    ``sampler`` overrides the mode's sampler: ``(num_frames, rng) -> indices``.
    ``frame_template``/``start_index`` apply to frame folders.
    """

    def __init__(self, records: Sequence[VideoRecord], num_segments: int, mode: str = "train",
                 transform: Optional[Callable] = None, on_error: str = "raise",
                 dense: bool = False, twice: bool = False, num_clips: int = 1,
                 dense_window: int = DENSE_WINDOW, sampler: Optional[Sampler] = None,
                 frame_template: Optional[str] = None, start_index: int = DEFAULT_START_INDEX,
                 seed: int = 0) -> None:
        if on_error not in ("raise", "skip"):
            raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
        if num_segments < 1:
            raise ValueError(f"num_segments must be >= 1, got {num_segments}")
        self.records = list(records)
        self.num_segments, self.mode, self.on_error = num_segments, mode, on_error
        self.sampler = sampler or make_sampler(mode, num_segments, dense=dense, twice=twice,
                                               num_clips=num_clips, window=dense_window)
        self.transform = transform if transform is not None else ToTensor()
        self.frame_template, self.start_index = frame_template, start_index
        self.seed, self.epoch = seed, 0
        self.skipped: list = []

    def __len__(self) -> int:
        return len(self.records)

    @property
    def labels(self) -> list:
        return [r.label for r in self.records]

    def set_epoch(self, epoch: int) -> None:
        """Change the training randomness (call once per epoch, like DistributedSampler)."""
        self.epoch = epoch

    def rng(self, index: int) -> np.random.Generator:
        """The generator of item ``index`` in the current epoch."""
        return np.random.default_rng([self.seed, self.epoch, index])

    def indices(self, index: int, rng: Optional[np.random.Generator] = None) -> np.ndarray:
        """Frame indices sampled for item ``index`` (uses :meth:`rng` unless given one)."""
        r = self.records[index]
        return self.sampler(r.num_frames, rng if rng is not None else self.rng(index))

    def load(self, index: int) -> tuple:
        """``(clip, label)`` of item ``index``; raises :class:`VideoDecodeError`."""
        r = self.records[index]
        rng = self.rng(index)
        frames = read_video_frames(r.path, self.indices(index, rng),
                                   frame_template=self.frame_template,
                                   start_index=self.start_index)
        clip = self.transform(frames, rng)
        if not torch.is_tensor(clip) or clip.dim() != 4 or clip.shape[1] != 3:
            raise TypeError(f"transform must return a float tensor (N, 3, H, W), got "
                            f"{tuple(clip.shape) if torch.is_tensor(clip) else type(clip)}")
        return clip, r.label

    def __getitem__(self, index: int):
        try:
            return self.load(index)
        except VideoDecodeError as e:
            if self.on_error == "raise":
                raise
            self.skipped.append((index, str(self.records[index].path), e.reason))
            log.warning("skipping video %d (%s): %s [%d skipped so far]", index,
                        self.records[index].path, e.reason, len(self.skipped))
            return None


def collate_skip_none(batch: Sequence) -> Optional[tuple]:
    """``default_collate`` over the items that are not ``None``; ``None`` if none is left."""
    kept = [b for b in batch if b is not None]
    return default_collate(kept) if kept else None
