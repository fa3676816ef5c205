"""A torch Dataset of clips for training and validation, on the same pipeline as test time.

``VideoDataset[key]`` returns ``(clip, label)`` with ``clip`` float ``(T, C, S, S)`` (``C`` = 3,
or ``2L`` for flow stacks ``[x_1, y_1, ..., x_L, y_L]``; uint8 in training where the transform
leaves the normalisation for later). ``key`` is an index, or
``(index, T, S)`` when the clip shape changes from batch to batch (multigrid).

* ``mode='train'``: the sampler of ``sampling`` (TSN: a random frame in each of ``T`` segments;
  dense: ``T`` frames ``window // T`` apart from a random start; :mod:`~tsm_apps.data.sampling`)
  then ``transform(S)`` (:func:`~tsm_apps.data.transforms.train_transform`: crop, mirror,
  normalise). Each item draws its randomness from a generator seeded by ``(seed, epoch,
  index)``: the same item is the same clip whatever process, worker or resume point asks.
* ``mode='val'``: one view under ``protocol`` (:mod:`~tsm_apps.data.protocol`), exactly the
  pixels ``tsm test`` scores (:func:`~tsm_apps.data.pipeline.views_from_frames`), at crop size
  ``S``.

Decoding: frames (or flow fields) are read per request, or once for the whole video and kept as
uint8 in memory (``cache=True``; ``frames=`` gives them directly, e.g. generated clips).

Bad videos: ``on_error='raise'`` (default) lets :class:`VideoDecodeError` propagate;
``on_error='skip'`` logs, records ``(index, path, reason)`` in :attr:`skipped` and returns
``None`` for that item (use :func:`collate_skip_none`), never another video in its place.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Callable, Optional, Sequence, Union

import numpy as np
import torch
from torch.utils.data import Dataset, default_collate

from ..progress import progress_bar
from .decoder import VideoDecodeError
from .pipeline import clip_indices, flow_stacks, views_from_frames
from .protocol import TestProtocol, official_scale_size
from .record import VideoSource
from .sampling import DENSE_WINDOW, TRAIN_SAMPLINGS, make_sampler
from .transforms import train_transform

log = logging.getLogger(__name__)
Key = Union[int, Sequence[int]]

__all__ = ["VideoDataset", "collate_skip_none"]


class VideoDataset(Dataset):
    """Clips of ``records`` (``path``, ``num_frames``, ``label``; see the module docstring).

    ``transform``: ``size -> (uint8 (N, H, W, C), rng) -> float (N, C, S, S)`` for training
    (default: :func:`train_transform` at that size, area crop, no mirror; pass something
    picklable, e.g. a ``functools.partial``, for DataLoader workers). ``protocol``: validation's
    views (default: shorter side :func:`~tsm_apps.data.protocol.official_scale_size`, centre
    crop). ``modality``: ``"rgb"``
    (video files / frame folders) or ``"flow"`` (flow folders, ``new_length`` fields a segment).
    """

    def __init__(
        self,
        records: Sequence[VideoSource],
        num_segments: int,
        mode: str = "train",
        size: int = 224,
        transform: Optional[Callable[[int], Callable]] = None,
        protocol: Optional[TestProtocol] = None,
        sampling: str = "tsn",
        dense_window: int = DENSE_WINDOW,
        modality: str = "rgb",
        new_length: int = 1,
        cache: bool = False,
        frames: Optional[Sequence] = None,
        on_error: str = "raise",
        seed: int = 0,
        progress: bool = False,
        frame_template: Optional[str] = None,
        start_index: int = 1,
    ) -> None:
        if mode not in ("train", "val"):
            raise ValueError(f"mode must be 'train' or 'val', got {mode!r}")
        if on_error not in ("raise", "skip"):
            raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
        if sampling not in TRAIN_SAMPLINGS:
            raise ValueError(f"sampling must be one of {TRAIN_SAMPLINGS}, got {sampling!r}")
        if num_segments < 1 or size < 1:
            raise ValueError(f"num_segments and size must be >= 1, got {num_segments}, {size}")
        self.records = list(records)
        self.num_segments, self.size, self.mode, self.on_error = num_segments, size, mode, on_error
        self.sampling, self.dense_window = sampling, dense_window
        self.modality, self.new_length = modality, (new_length if modality == "flow" else 1)
        self.make_transform = transform or partial(
            train_transform, crop="area", flip=False, modality=modality
        )
        self.frame_template, self.start_index = frame_template, start_index
        self.protocol = protocol or TestProtocol(
            scale_size=official_scale_size(size), crop_size=size, source="validation"
        )
        self.seed, self.epoch = seed, 0
        self.skipped: list = []
        self._transforms: dict = {}
        self.frames = [np.asarray(f) for f in frames] if frames is not None else None
        if cache and self.frames is None:
            self.frames = [
                self._read(r, np.arange(int(r.num_frames)))
                for r in progress_bar(
                    self.records, desc="decoding videos", unit="video", enabled=progress
                )
            ]

    @classmethod
    def from_tensor(
        cls,
        videos: torch.Tensor,
        labels: Sequence[int],
        train: bool,
        num_segments: int,
        size: int,
        **kw,
    ) -> "VideoDataset":
        """Clips of uint8 videos ``(N, F, H, W, 3)`` held in memory (tests, generated data)."""
        if videos.dim() != 5 or videos.shape[-1] != 3 or videos.dtype != torch.uint8:
            raise ValueError(
                f"videos must be uint8 (N, F, H, W, 3), got {videos.dtype} {tuple(videos.shape)}"
            )
        if len(labels) != len(videos):
            raise ValueError(f"{len(videos)} videos but {len(labels)} labels")
        records = [
            VideoSource(Path(f"<memory:{i}>"), videos.shape[1], int(lab))
            for i, lab in enumerate(labels)
        ]
        return cls(
            records,
            num_segments,
            "train" if train else "val",
            size,
            frames=[v.numpy() for v in videos],
            **kw,
        )

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

    def _read(self, r: VideoSource, indices: np.ndarray) -> np.ndarray:
        if self.modality == "flow":
            from .flow import read_flow

            return read_flow(r.path, indices)
        from .video import read_video_frames

        return read_video_frames(r.path, indices, self.frame_template, self.start_index)

    def _reader(self, index: int) -> Callable[[np.ndarray], np.ndarray]:
        if self.frames is not None:
            return lambda i: self.frames[index][np.asarray(i, np.int64)]
        return lambda i: self._read(self.records[index], np.asarray(i, np.int64))

    def _count(self, index: int) -> int:
        return (
            len(self.frames[index])
            if self.frames is not None
            else int(self.records[index].num_frames)
        )

    def indices(self, index: int, t: int, rng: np.random.Generator) -> np.ndarray:
        """``(T,)`` training start frames of item ``index`` (the mode's sampler)."""
        n = self._count(index)
        positions = max(n - self.new_length + 1, 1)
        dense = self.sampling == "dense"
        sampler = make_sampler("train", t, dense=dense, window=self.dense_window)
        return sampler(n if dense else positions, rng)

    def transform(self, size: int) -> Callable:
        if size not in self._transforms:
            self._transforms[size] = self.make_transform(size)
        return self._transforms[size]

    def load(self, index: int, t: int, size: int) -> tuple:
        """``(clip (T, C, S, S), label)`` of item ``index``; raises VideoDecodeError."""
        label = self.records[index].label
        read, n = self._reader(index), self._count(index)
        if self.mode == "val":
            dense = "dense" if self.protocol.sampling == "dense" else "tsn"
            proto = replace(self.protocol, crop_size=size, clips=1, crops=1, sampling=dense)
            idx = clip_indices(proto, n, t, self.new_length)
            stacks = flow_stacks(idx, self.new_length, n) if self.modality == "flow" else None
            return views_from_frames(read, idx, proto, self.modality, stacks).input[0], label
        rng = self.rng(index)
        idx = self.indices(index, t, rng)
        flat = flow_stacks(idx, self.new_length, n).reshape(-1) if self.modality == "flow" else idx
        x = self.transform(size)(read(flat), rng)  # (T*L, C, S, S)
        if not torch.is_tensor(x) or x.dim() != 4 or x.shape[0] != len(flat):
            got = tuple(x.shape) if torch.is_tensor(x) else type(x).__name__
            raise TypeError(
                f"transform must return a tensor (N, C, H, W) with N = "
                f"{len(flat)} frames, got {got}"
            )
        return x.reshape(t, -1, *x.shape[-2:]), label

    def __getitem__(self, key: Key):
        index, t, s = (
            (key, self.num_segments, self.size) if isinstance(key, (int, np.integer)) else key
        )
        try:
            return self.load(int(index), int(t), int(s))
        except VideoDecodeError as e:
            if self.on_error == "raise":
                raise
            self.skipped.append((index, str(self.records[index].path), e.reason))
            log.warning(
                "skipping video %d (%s): %s [%d skipped so far]",
                index,
                self.records[index].path,
                e.reason,
                len(self.skipped),
            )
            return None


def collate_skip_none(batch: Sequence) -> Optional[tuple]:
    """``default_collate`` over the items that are not ``None``; ``None`` if none is left."""
    kept = [b for b in batch if b is not None]
    return default_collate(kept) if kept else None
