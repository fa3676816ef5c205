"""The setting of ``tsm bench datapath`` (:mod:`tsm_apps.bench.data_path`) and the video
set it trains on.

The set (:func:`write_videos`, into a temporary folder): a small Kinetics-like set of mp4 files
(H.264 at crf 18, one keyframe a second) of ``height x width`` frames larger than the crop
(340x256, Kinetics' short-side-256 copies), in class folders, listed in ``train.txt`` /
``val.txt`` (``path num_frames label``) beside ``classes.txt``, the layout ``tsm train --data``
reads. The clips are the synthetic temporal set's (:mod:`tsm_apps.synth.temporal_clips`), drawn
small and resized.

:class:`Setting` holds the sizes (model, batch, frames, workers, steps) of one measurement;
:func:`tiny_setting` is the CPU one of the tests.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..data.lists import write_tsm_list
from ..data.record import VideoSource
from ..data.resize import resize_frames
from ..data.video_writer import write_video
from ..io import atomic_write_text
from ..synth.jobs import run_jobs
from ..synth.temporal_clips import CLASSES, plan_clip, render_clip

CRF = 18  # x264's "visually lossless": a lossy file to decode, as a real set's are


@dataclass(frozen=True)
class Setting:
    """One measured setting: ``preset`` with the ``model`` overrides, ``batch`` clips, videos of
    ``frames`` frames of ``height x width`` at ``fps``; ``warmup`` loaded steps (default: one
    per worker, plus 2), ``steps`` timed steps (default: ``3 x workers``, at least 12),
    ``workers`` loader processes (default: the CPU count less 2)."""

    preset: str = "kinetics"
    model: tuple = ()  # ((name, value), ...) config overrides, e.g. (("arch", "resnet18"),)
    size: int = 224
    batch: int = 8
    frames: int = 96
    height: int = 256
    width: int = 340
    fps: int = 25
    workers: Optional[int] = None
    warmup: Optional[int] = None
    steps: Optional[int] = None
    tensor_warmup: int = 5
    variants: bool = True  # also time the loader with the older options (detail)

    @property
    def num_workers(self) -> int:
        return self.workers if self.workers is not None else max(1, (os.cpu_count() or 2) - 2)

    @property
    def warmup_steps(self) -> int:
        return self.warmup if self.warmup is not None else self.num_workers + 2

    @property
    def timed_steps(self) -> int:
        return self.steps if self.steps is not None else max(12, 3 * self.num_workers)

    @property
    def train_videos(self) -> int:
        """Enough that one loader run reads no video twice (warm-up, timed steps, one more)."""
        return (self.warmup_steps + self.timed_steps + 2) * self.batch


def tiny_setting() -> Setting:
    """The CPU setting of the tests: ResNet-18 at 1/8 width, 4 segments, 32 px crops of 48x64
    frames, batch 2, one worker, two timed steps."""
    model = (("arch", "resnet18"), ("width", 0.125), ("segments", 4))
    return Setting(
        model=model,
        size=32,
        batch=2,
        frames=16,
        height=48,
        width=64,
        workers=1,
        warmup=1,
        steps=2,
        tensor_warmup=1,
        variants=False,
    )


def _video_job(job: tuple) -> tuple:
    root, index, frames, height, width, fps = job
    label = index % len(CLASSES)
    rel = f"videos/{CLASSES[label].replace(' ', '_')}/{index:05d}.mp4"
    small = max(32, height // 2 // 2 * 2)  # drawn small (cheap), resized to the frame size
    clip = render_clip(plan_clip(0, index, frames, small, label), small)
    write_video(Path(root) / rel, resize_frames(clip, (height, width)), fps, crf=CRF, threads=1)
    return rel, label


def write_videos(root: Path, setting: Setting, val_videos: int = 2) -> Path:
    """The set of ``setting`` under ``root`` (module docstring); returns ``root``."""
    s = setting
    n = s.train_videos + val_videos
    jobs = [(str(root), i, s.frames, s.height, s.width, s.fps) for i in range(n)]
    made = run_jobs(_video_job, jobs, None, False, "datapath videos")
    records = [VideoSource(root / rel, s.frames, label) for rel, label in made]
    write_tsm_list(root / "train.txt", records[: s.train_videos])
    write_tsm_list(root / "val.txt", records[s.train_videos :])
    atomic_write_text(root / "classes.txt", "".join(c + "\n" for c in CLASSES))
    return root
