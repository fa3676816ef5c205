"""``train(cfg)``: the Python entry point behind ``tsm train`` (single process or under torchrun)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any, Optional, Sequence

from torch.utils.data import Dataset

from ..data.classes import read_class_file
from ..data.dataset import VideoDataset
from ..data.lists import read_tsm_list
from ..data.transforms import train_transform
from ..distributed import env_from, pick_device, process_group
from .config import TrainConfig
from .graphs import check_cuda_graphs
from .hooks import HookBase
from .inputs import check_inputs
from .trainer import Trainer


def read_classes(list_file: Path) -> list:
    """Class names from ``classes.txt`` beside the list
    (:func:`~tsm_apps.data.classes.read_class_file`); none when there is no such file."""
    path = list_file.parent / "classes.txt"
    return read_class_file(path) if path.is_file() else []


def clip_sets(cfg: TrainConfig, progress: bool = False, device: Any = "cpu") -> tuple:
    """``(train set, val set, num_classes, class names)`` from ``cfg.data.path``: two
    :class:`~tsm_apps.data.dataset.VideoDataset` on the one clip pipeline; training clips
    leave the loader normalised or as uint8 (``cfg.data.normalize_on(device)``)."""
    train_list, val_list = cfg.data.lists()
    train_rec, val_rec = read_tsm_list(train_list), read_tsm_list(val_list)
    classes = read_classes(train_list)
    labels = [r.label for r in train_rec + val_rec]
    num_classes = cfg.model.num_classes or max(len(classes), max(labels) + 1)
    if max(labels) >= num_classes:
        raise ValueError(
            f"label {max(labels)} found in {train_list}/{val_list} but num_classes is {num_classes}"
        )
    val_protocol = cfg.test_protocol().with_options(clips=1, crops=1, crop_size=cfg.data.size)
    common = dict(
        num_segments=cfg.model.segments,
        size=cfg.data.size,
        protocol=val_protocol,
        transform=train_augmentation(cfg, cfg.data.normalize_on(device)),
        sampling=cfg.data.sampling,
        modality=cfg.model.modality,
        new_length=cfg.model.new_length,
        cache=cfg.data.cache,
        progress=progress,
        seed=cfg.seed,
    )
    return (
        VideoDataset(train_rec, mode="train", **common),
        VideoDataset(val_rec, mode="val", **common),
        num_classes,
        classes,
    )


def train_augmentation(cfg: TrainConfig, normalize_on: str = "worker") -> partial:
    """``size -> transform`` of the run's training augmentation (crop, mirror, and normalise
    when ``normalize_on`` is ``"worker"``; uint8 clips for ``"device"``)."""
    d = cfg.data
    return partial(
        train_transform,
        crop=d.crop,
        flip=d.flip,
        min_area=d.min_area,
        scales=tuple(d.crop_scales),
        modality=cfg.model.modality,
        normalize=normalize_on == "worker",
    )


def train(
    cfg: TrainConfig,
    train_set: Optional[Dataset] = None,
    val_set: Optional[Dataset] = None,
    num_classes: Optional[int] = None,
    hooks: Optional[Sequence[HookBase]] = None,
) -> dict:
    """Train per ``cfg`` in this process (rank/world from torchrun or SLURM variables).

    Datasets may be injected (they must yield ``((T, 3, S, S), label)`` for an index or an
    ``(index, T, S)`` request and have ``set_epoch``); by default they come from ``cfg.data.path``.
    ``hooks``: the loop's hooks in place of the defaults
    (:meth:`~tsm_apps.train.trainer.Trainer.default_hooks`), as :class:`Trainer` takes them.
    Returns the summary: ``val_top1``, ``best_top1``, ``wall_s``, all-reduce counts, ...
    """
    check_inputs(cfg, data=train_set is None or val_set is None)  # before decoding anything
    env = env_from()
    device = pick_device(cfg.device, env)
    check_cuda_graphs(cfg, device, env.world_size)  # before decoding anything
    meta = {}
    if train_set is None or val_set is None:
        train_set, val_set, n, classes = clip_sets(cfg, cfg.progress and env.is_main, device)
        num_classes = num_classes or n
        meta["classes"] = classes
    meta["test_protocol"] = cfg.test_protocol().to_dict()
    if not num_classes:
        raise ValueError("num_classes must be given with injected datasets")
    with process_group(env, device):
        trainer = Trainer(cfg, env, device, train_set, val_set, num_classes, meta, hooks)
        summary = trainer.fit()
    summary.update(rank=env.rank, world_size=env.world_size, device=str(device))
    return summary
