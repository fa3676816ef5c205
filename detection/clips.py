"""Training clips: a batch sampler that turns sampled key frames into clips of ``T`` frames.

mmengine config::

    train_dataloader = dict(
        batch_size=2,                       # clips per batch (per GPU)
        sampler=dict(type='DefaultSampler', shuffle=True),
        batch_sampler=dict(type='ClipBatchSampler', clip_len=4, key_position='end'),
        ...)

The inner sampler draws key frames (dataset indices; it handles shuffling, epochs and
distributed ranks); for each key frame the clip is ``T`` consecutive frames of its video that
contain it (:func:`clip_for_key`):

* ``key_position='end'`` (default; the paper config): the clip ends at the key frame, so the
  key frame sees the ``T - 1`` frames before it, as the online detector does at test time. A
  key frame among the first ``T - 1`` frames of its video gets the video's first ``T`` frames
  (it then sees exactly the frames the stream has seen before it).
* ``key_position='random'``: the clip starts at a uniformly random position among those that
  contain the key frame.

A video shorter than ``T`` (a DET image is a one-frame video) gives all its frames and then its
last frame repeated; the key frame takes the LAST of its repeats (``repeated_key='last'``, the
default: a DET image is a static video whose key sees its own copies through the causal shift,
as FGFA's DET reference frames are copies of the key, ``lib/utils/image.py:124-138``), or the
first (``repeated_key='first'``: zeros in every shifted channel, as a snippet's first frame;
the order every detector before it was trained with). A batch is the
``batch_size * T`` indices, clip by clip, so the model sees ``(N*T, 3, H, W)`` with the frames
of a clip contiguous. The key frame's index in its clip is a :class:`KeyFrameIndex` (an ``int``
that says so): ``ImageNetVIDDataset`` turns
it into the metainfo ``clip_key``, the frame whose labels ``ClipRFCN(loss_frames='key')``
trains on. Frames of one video share a size, so mmdet's default collate and
``DetDataPreprocessor`` (padding per batch) need nothing else.

For testing the online detector on several processes, :class:`VideoShardSampler` gives each
rank whole videos with their frames in order (mmengine's ``DefaultSampler`` would deal the
frames out round-robin, so no rank would see consecutive frames)::

    test_dataloader = dict(batch_size=1, sampler=dict(type='VideoShardSampler'), ...)

The per-video frame order comes from ``dataset.video_index`` when the dataset has one (a
mapping ``video -> dataset indices in frame order``, or a method returning it), else from one
pass over ``dataset.get_data_info(i)['video' / 'frame_id']``.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Dict, Iterator, List, Mapping, Optional, Sequence

import numpy as np
from mmdet.registry import DATA_SAMPLERS
from mmengine.dist import get_dist_info
from torch.utils.data import Sampler


def build_video_index(dataset) -> Dict[object, List[int]]:
    """``video -> dataset indices sorted by frame_id`` for frame-level entries."""
    if callable(getattr(dataset, "full_init", None)):
        dataset.full_init()  # lazily initialised mmengine datasets fill their index here
    given = getattr(dataset, "video_index", None)
    if callable(given):
        given = given()
    if isinstance(given, Mapping):
        return {v: [int(i) for i in idx] for v, idx in given.items()}
    frames = defaultdict(list)
    for i in range(len(dataset)):
        info = dataset.get_data_info(i)
        if "video" not in info or "frame_id" not in info:
            raise ValueError(
                f"dataset entry {i} has no 'video'/'frame_id' (keys {sorted(info)}); "
                "ClipBatchSampler needs frame-level video entries"
            )
        frames[info["video"]].append((int(info["frame_id"]), i))
    return {v: [i for _, i in sorted(fr)] for v, fr in frames.items()}


KEY_POSITIONS = ("end", "random")
REPEATED_KEYS = ("first", "last")


class KeyFrameIndex(int):
    """A dataset index that is the key frame of its training clip; used as a plain ``int``
    everywhere (and pickled as one to data-loader workers), told apart by ``isinstance``."""

    __slots__ = ()


def clip_for_key(
    frames: Sequence[int],
    pos: int,
    clip_len: int,
    key_position: str = "end",
    rng: Optional[np.random.Generator] = None,
) -> list:
    """``clip_len`` consecutive entries of ``frames`` containing the key frame ``frames[pos]``.

    ``key_position='end'``: the clip ends at the key frame (the first ``clip_len`` frames when
    ``pos < clip_len - 1``); ``'random'``: a uniformly random start drawn from ``rng``. Videos
    of at most ``clip_len`` frames: all frames, then the last one repeated.
    """
    n = len(frames)
    if not 0 <= pos < n:
        raise ValueError(f"position {pos} outside a video of {n} frames")
    if key_position not in KEY_POSITIONS:
        raise ValueError(f"key_position must be one of {KEY_POSITIONS}, got {key_position!r}")
    if n <= clip_len:
        return list(frames) + [frames[-1]] * (clip_len - n)
    lo, hi = max(0, pos - clip_len + 1), min(pos, n - clip_len)
    if key_position == "end":
        start = lo
    elif rng is None:
        raise ValueError("key_position='random' needs an rng")
    else:
        start = int(rng.integers(lo, hi + 1))
    return list(frames[start : start + clip_len])


@DATA_SAMPLERS.register_module()
class ClipBatchSampler(Sampler):
    """Batches of ``batch_size`` clips of ``clip_len`` consecutive frames (indices flattened).

    Args:
        sampler: the key-frame sampler (mmengine ``DefaultSampler`` / ``InfiniteSampler``),
            whose ``dataset`` holds frame-level entries with ``video`` and ``frame_id``.
        batch_size: clips per batch.
        clip_len: ``T``, equal to the backbone's ``num_segments``.
        key_position: ``'end'`` (the clip ends at the key frame) or ``'random'`` (see the
            module docstring).
        repeated_key: where the key frame sits in a clip of a video shorter than ``clip_len``,
            whose last frame repeats (a DET image is ``[i, i, i, i]``): ``'last'`` (default: the
            key sees its own copies through the shift, a static video, as FGFA's DET reference
            frames are copies of the key) or ``'first'`` (the key at its first place: for the
            causal shift, zeros in every shifted channel, as the first frame of a snippet).
        drop_last: drop a last incomplete batch.
        seed: seed of the random clip starts (default: the inner sampler's ``seed``, else 0);
            starts also depend on the epoch, so they differ between epochs but not between runs.
    """

    def __init__(
        self,
        sampler: Sampler,
        batch_size: int,
        clip_len: int = 2,
        key_position: str = "end",
        drop_last: bool = False,
        seed: int | None = None,
        repeated_key: str = "last",
    ) -> None:
        if batch_size < 1 or clip_len < 1:
            raise ValueError(f"batch_size and clip_len must be >= 1, got {batch_size}, {clip_len}")
        if key_position not in KEY_POSITIONS:
            raise ValueError(
                f"ClipBatchSampler: key_position must be one of {KEY_POSITIONS}, "
                f"got {key_position!r}"
            )
        if repeated_key not in REPEATED_KEYS:
            raise ValueError(
                f"ClipBatchSampler: repeated_key must be one of {REPEATED_KEYS}, "
                f"got {repeated_key!r}"
            )
        dataset = getattr(sampler, "dataset", None)
        if dataset is None:
            raise TypeError(
                f"ClipBatchSampler needs a sampler with a .dataset, got {type(sampler).__name__}"
            )
        self.sampler, self.batch_size, self.clip_len = sampler, batch_size, clip_len
        self.key_position, self.drop_last = key_position, drop_last
        self.repeated_key = repeated_key
        self.seed = int(seed if seed is not None else (getattr(sampler, "seed", None) or 0))
        self.videos = build_video_index(dataset)
        self.where = {i: (v, p) for v, idx in self.videos.items() for p, i in enumerate(idx)}
        self._epoch, self._passes = 0, 0

    def clip_of(self, index: int, rng: np.random.Generator) -> list:
        """The clip (dataset indices) drawn for key frame ``index``, the key frame as a
        :class:`KeyFrameIndex`."""
        if index not in self.where:
            raise ValueError(f"dataset index {index} belongs to no video of the index")
        video, pos = self.where[index]
        clip = clip_for_key(self.videos[video], pos, self.clip_len, self.key_position, rng)
        at = clip.index(index)  # the key's own place (a short video repeats its last frame)
        if self.repeated_key == "last":
            at = len(clip) - 1 - clip[::-1].index(index)
        clip[at] = KeyFrameIndex(index)
        return clip

    def __iter__(self) -> Iterator[list]:
        epoch = int(getattr(self.sampler, "epoch", 0))
        if epoch != self._epoch:
            self._epoch, self._passes = epoch, 0
        rng = np.random.default_rng([self.seed, epoch, self._passes])
        self._passes += 1  # an iter-based loop restarting the same epoch gets new starts
        batch = []
        for index in self.sampler:
            batch.extend(self.clip_of(int(index), rng))
            if len(batch) == self.batch_size * self.clip_len:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def set_epoch(self, epoch: int) -> None:
        if hasattr(self.sampler, "set_epoch"):
            self.sampler.set_epoch(epoch)


@DATA_SAMPLERS.register_module()
class VideoShardSampler(Sampler):
    """Test sampler: whole videos per rank, frames in order, every index once (no padding).

    Videos go to ranks greedily by frame count (largest first, to the least loaded rank) and
    keep their dataset order within a rank. Only indices ``< len(dataset)`` are yielded (the
    ones ``DefaultSampler`` would yield). mmengine's result collection accepts the unequal
    parts, and the metrics key results by frame, so their order does not matter.

    Args:
        dataset: frame-level dataset (see :func:`build_video_index`).
        seed: unused (mmengine passes it to every sampler).
        rank / world_size: default: from ``mmengine.dist.get_dist_info()``.
    """

    def __init__(
        self,
        dataset,
        seed: int | None = None,
        rank: int | None = None,
        world_size: int | None = None,
    ) -> None:
        dist_rank, dist_world = get_dist_info()
        self.rank = dist_rank if rank is None else rank
        self.world_size = dist_world if world_size is None else world_size
        if not 0 <= self.rank < self.world_size:
            raise ValueError(f"rank {self.rank} outside world_size {self.world_size}")
        self.dataset = dataset
        n = len(dataset)
        videos = [[i for i in idx if i < n] for idx in build_video_index(dataset).values()]
        videos = [v for v in videos if v]
        load = [0] * self.world_size
        owner = {}
        for k in sorted(range(len(videos)), key=lambda k: (-len(videos[k]), k)):
            r = min(range(self.world_size), key=lambda r: (load[r], r))
            owner[k], load[r] = r, load[r] + len(videos[k])
        self.indices = [i for k, v in enumerate(videos) if owner[k] == self.rank for i in v]

    def __iter__(self) -> Iterator[int]:
        return iter(self.indices)

    def __len__(self) -> int:
        return len(self.indices)
