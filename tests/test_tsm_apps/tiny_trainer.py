"""The trainer tests' tiny run: a ResNet-18 TSM of width 1/8 over 8 toy motion videos (2 frames
of 32 px a clip), one epoch of batches of 4, on the CPU, nothing written but its checkpoints."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import torch

from tests.test_tsm_apps.toy_videos import motion_videos
from tsm_apps.data.dataset import VideoDataset
from tsm_apps.distributed import DistEnv
from tsm_apps.train import load_config
from tsm_apps.train.trainer import Trainer

TINY = dict(arch="resnet18", width=0.125, segments=2, size=32, epochs=1, batch_size=4)


def tiny_trainer(work_dir: Path, seed: Optional[int] = 0, **config) -> Trainer:
    """A :class:`Trainer` of the tiny run in ``work_dir``; ``config`` overrides :data:`TINY`
    and adds any other config key; ``seed``: torch's seed before the model is built (None:
    not seeded)."""
    videos, labels = motion_videos(8, frames=4, size=32)
    ds = VideoDataset.from_tensor(videos, labels, True, 2, 32)
    cfg = load_config(
        **{**TINY, "work_dir": str(work_dir), "progress": False, "tensorboard": False, **config}
    )
    if seed is not None:
        torch.manual_seed(seed)
    return Trainer(cfg, DistEnv(), torch.device("cpu"), ds, ds, 2, hooks=[])
