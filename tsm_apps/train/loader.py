"""The training batches on their way to the device: the ``DataLoader`` of an epoch and the copy.

:func:`train_loader` is the one construction of a training loader (the trainer's epochs and
precise BN): ``workers`` processes, :data:`PREFETCH` batches queued per worker,
:data:`DECODE_THREADS` decoder thread in each worker, and on CUDA pinned host memory (the copy
in :func:`on_device` is then asynchronous, ``non_blocking``). Workers are not kept across
epochs (``persistent_workers``): a loader is built per epoch, after ``set_epoch``, and a kept
worker would go on drawing clips from its copy of the dataset at the epoch it was started in;
starting them costs a few seconds an epoch.

Clips leave the workers either normalised (float32) or as uint8 (``data.normalize``, see
:class:`~tsm_apps.train.sections.DataConfig`); :func:`on_device` normalises a uint8 batch after
the copy (:func:`~tsm_apps.data.normalization.normalize_uint8`, the workers' arithmetic bit for
bit), so the model sees the same batch either way.
"""

from __future__ import annotations

from functools import partial

import torch
from torch import Tensor
from torch.utils.data import DataLoader, Dataset, Sampler

from ..data.decoder import set_decode_threads
from ..data.normalization import normalize_uint8

PREFETCH = 4  # batches queued per worker (DataLoader's default: 2)
DECODE_THREADS = 1  # a worker's decoder threads: the workers are the parallelism

__all__ = ["DECODE_THREADS", "PREFETCH", "loader_options", "on_device", "train_loader"]


def _start_worker(decode_threads: int, worker_id: int) -> None:
    set_decode_threads(decode_threads)


def loader_options(
    workers: int,
    device: torch.device | str,
    pin: bool | None = None,
    prefetch: int = PREFETCH,
    decode_threads: int = DECODE_THREADS,
) -> dict:
    """``DataLoader`` keywords: ``workers`` processes, ``prefetch`` batches each, each decoding
    with ``decode_threads`` threads (:func:`~tsm_apps.data.decoder.set_decode_threads`), pinned
    memory when ``pin`` (default: ``device`` is CUDA)."""
    if workers < 0:
        raise ValueError(f"workers must be >= 0, got {workers}")
    pin = torch.device(device).type == "cuda" if pin is None else pin
    kw: dict = {"num_workers": workers, "pin_memory": bool(pin)}
    if workers > 0:
        kw.update(prefetch_factor=prefetch, worker_init_fn=partial(_start_worker, decode_threads))
    return kw


def train_loader(
    dataset: Dataset, batches: Sampler, workers: int, device: torch.device | str, **options
) -> DataLoader:
    """The loader of ``batches`` (a batch sampler: lists of keys) of ``dataset`` for training
    on ``device``; ``options`` override :func:`loader_options` (``pin``, ``prefetch``,
    ``decode_threads``)."""
    return DataLoader(dataset, batch_sampler=batches, **loader_options(workers, device, **options))


def on_device(x: Tensor, device: torch.device | str, modality: str = "rgb") -> Tensor:
    """A loader's clips ``(N, T, C, S, S)`` on ``device`` (an asynchronous copy from pinned
    memory), normalised there when they came as uint8; float clips are passed through."""
    x = x.to(device, non_blocking=True)
    return normalize_uint8(x, modality) if x.dtype == torch.uint8 else x
