"""TSN segment sampling: which frames of a video make a clip.

Every function returns an int64 array of 0-based frame indices in ``[0, num_frames)``; multi-clip
samplers return ``(num_clips * num_segments,)`` with the frames of one clip contiguous. The
formulas are those of the official TSM repository (``ops/dataset.py``: ``_sample_indices``,
``_get_val_indices``, ``_get_test_indices``, ``dense_sample``, ``twice_sample``) with
``new_length = 1`` (RGB), shifted from its 1-based frame numbers to 0-based indices.
Randomness comes only from the ``numpy.random.Generator`` passed in.
"""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np

DENSE_WINDOW = 64
# how training clips are sampled: TSN's segments or one dense window (``make_sampler(dense=)``)
TRAIN_SAMPLINGS = ("tsn", "dense")
DENSE_TEST_CLIPS = 10
Sampler = Callable[[int, Optional[np.random.Generator]], np.ndarray]

__all__ = [
    "sample_train",
    "sample_val",
    "sample_test",
    "sample_twice",
    "sample_multi_clip",
    "dense_sample",
    "dense_sample_test",
    "make_sampler",
    "SegmentSampler",
    "DENSE_WINDOW",
    "DENSE_TEST_CLIPS",
]


def _check(num_frames: int, num_segments: int) -> None:
    if not isinstance(num_frames, (int, np.integer)) or num_frames < 1:
        raise ValueError(f"num_frames must be an integer >= 1, got {num_frames!r}")
    if not isinstance(num_segments, (int, np.integer)) or num_segments < 1:
        raise ValueError(f"num_segments must be an integer >= 1, got {num_segments!r}")


def _ticks(num_frames: int, num_segments: int, offset: float) -> np.ndarray:
    tick = num_frames / float(num_segments)
    return np.array([int(tick * offset + tick * x) for x in range(num_segments)], np.int64)


def sample_train(num_frames: int, num_segments: int, rng: np.random.Generator) -> np.ndarray:
    """Training: a random frame inside each of ``T`` equal segments.

    ``d = num_frames // T``; if ``d > 0``: ``index[i] = i * d + rng.integers(d)`` (the last
    ``num_frames % T`` frames are never used, as in the official code). Videos shorter than
    ``T`` give all zeros (the official ``offsets = zeros`` branch).
    """
    _check(num_frames, num_segments)
    d = num_frames // num_segments
    if d > 0:
        return np.arange(num_segments, dtype=np.int64) * d + rng.integers(d, size=num_segments)
    return np.zeros(num_segments, np.int64)


def sample_val(num_frames: int, num_segments: int) -> np.ndarray:
    """Validation during training: segment centres ``int(tick / 2 + tick * i)``,
    ``tick = num_frames / T``, when ``num_frames > T``; all zeros otherwise (official)."""
    _check(num_frames, num_segments)
    if num_frames > num_segments:
        return _ticks(num_frames, num_segments, 0.5)
    return np.zeros(num_segments, np.int64)


def sample_test(num_frames: int, num_segments: int) -> np.ndarray:
    """Testing: segment centres ``int(tick / 2 + tick * i)``, ``tick = num_frames / T``
    (for every length; a short video repeats frames)."""
    _check(num_frames, num_segments)
    return _ticks(num_frames, num_segments, 0.5)


def sample_twice(num_frames: int, num_segments: int) -> np.ndarray:
    """Two test clips ``(2T,)``: segment centres ``int(tick / 2 + tick * i)`` then segment
    starts ``int(tick * i)`` (the official ``twice_sample``)."""
    _check(num_frames, num_segments)
    return np.concatenate(
        [_ticks(num_frames, num_segments, 0.5), _ticks(num_frames, num_segments, 0.0)]
    )


def sample_multi_clip(num_frames: int, num_segments: int, num_clips: int) -> np.ndarray:
    """``K = num_clips`` test clips ``(K*T,)`` spread evenly inside the segments: clip ``k``
    takes ``floor(num_frames * (i + (k + 0.5) / K) / T)``, computed in exact integer arithmetic
    (no float off-by-one at segment boundaries). ``K = 1`` is :func:`sample_test` (the official
    float formula)."""
    _check(num_frames, num_segments)
    if num_clips < 1:
        raise ValueError(f"num_clips must be >= 1, got {num_clips}")
    if num_clips == 1:
        return sample_test(num_frames, num_segments)
    i = np.arange(num_segments, dtype=np.int64)
    k = np.arange(num_clips, dtype=np.int64)[:, None]
    num = num_frames * (2 * num_clips * i + 2 * k + 1)
    return (num // (2 * num_clips * num_segments)).reshape(-1)


def _dense_positions(num_frames: int, num_segments: int, window: int) -> tuple:
    if window < num_segments:
        raise ValueError(f"dense window {window} is shorter than {num_segments} segments")
    return max(1, 1 + num_frames - window), window // num_segments


def dense_sample(
    num_frames: int, num_segments: int, rng: np.random.Generator, window: int = DENSE_WINDOW
) -> np.ndarray:
    """Dense (I3D-style) training/validation clip: ``T`` frames ``stride = window // T`` apart
    from a random start, wrapping around short videos.

    ``p = max(1, 1 + num_frames - window)``; ``start = 0 if p == 1 else rng.integers(0, p - 1)``;
    ``index[i] = (i * stride + start) % num_frames`` (official, so ``start <= p - 2``).
    """
    _check(num_frames, num_segments)
    pos, stride = _dense_positions(num_frames, num_segments, window)
    start = 0 if pos == 1 else int(rng.integers(0, pos - 1))
    return (np.arange(num_segments, dtype=np.int64) * stride + start) % num_frames


def dense_sample_test(
    num_frames: int,
    num_segments: int,
    num_clips: int = DENSE_TEST_CLIPS,
    window: int = DENSE_WINDOW,
) -> np.ndarray:
    """Dense test clips ``(num_clips*T,)``: starts ``np.linspace(0, p - 1, num_clips, dtype=int)``
    with ``p = max(1, 1 + num_frames - window)``, then as :func:`dense_sample` for each start."""
    _check(num_frames, num_segments)
    if num_clips < 1:
        raise ValueError(f"num_clips must be >= 1, got {num_clips}")
    pos, stride = _dense_positions(num_frames, num_segments, window)
    starts = np.linspace(0, pos - 1, num=num_clips, dtype=int)
    steps = np.arange(num_segments, dtype=np.int64) * stride
    return np.concatenate([(steps + s) % num_frames for s in starts.tolist()]).astype(np.int64)


class SegmentSampler:
    """A picklable ``(num_frames, rng) -> indices``: ``fn(num_frames, *args, [rng,] **kwargs)``
    (``rng`` passed only when ``random``), so data sets work with spawned DataLoader workers."""

    def __init__(
        self, fn: Callable, args: tuple = (), kwargs: Optional[dict] = None, random: bool = False
    ) -> None:
        self.fn, self.args, self.kwargs, self.random = fn, tuple(args), dict(kwargs or {}), random

    def __call__(self, num_frames: int, rng: Optional[np.random.Generator] = None) -> np.ndarray:
        if self.random:
            if rng is None:
                raise ValueError(f"{self.fn.__name__} needs a numpy Generator, got None")
            return self.fn(num_frames, *self.args, rng, **self.kwargs)
        return self.fn(num_frames, *self.args, **self.kwargs)

    def __repr__(self) -> str:
        return f"SegmentSampler({self.fn.__name__}, {self.args}, {self.kwargs})"


def make_sampler(
    mode: str,
    num_segments: int,
    dense: bool = False,
    twice: bool = False,
    num_clips: int = 1,
    window: int = DENSE_WINDOW,
) -> Sampler:
    """A function ``(num_frames, rng) -> indices`` for a data set ``mode``.

    ``train``: :func:`sample_train` (or :func:`dense_sample`); ``val``: :func:`sample_val` (or
    :func:`dense_sample`); ``test``: :func:`sample_test`, :func:`sample_twice`,
    :func:`sample_multi_clip` (``num_clips > 1``) or :func:`dense_sample_test` (``num_clips``
    clips; 10 as in the official test script when ``num_clips == 1``).
    """
    if mode not in ("train", "val", "test"):
        raise ValueError(f"mode must be 'train', 'val' or 'test', got {mode!r}")
    if sum([dense, twice, num_clips > 1 and not dense]) > 1:
        raise ValueError("choose one of dense, twice, num_clips > 1")
    if mode != "test" and (twice or num_clips > 1):
        raise ValueError(f"twice / num_clips apply to mode='test' only, got mode={mode!r}")
    t = num_segments
    if mode != "test":
        if dense:
            return SegmentSampler(dense_sample, (t,), {"window": window}, True)
        return (
            SegmentSampler(sample_train, (t,), {}, True)
            if mode == "train"
            else SegmentSampler(sample_val, (t,))
        )
    if dense:
        k = num_clips if num_clips > 1 else DENSE_TEST_CLIPS
        return SegmentSampler(dense_sample_test, (t, k, window))
    if twice:
        return SegmentSampler(sample_twice, (t,))
    if num_clips > 1:
        return SegmentSampler(sample_multi_clip, (t, num_clips))
    return SegmentSampler(sample_test, (t,))
