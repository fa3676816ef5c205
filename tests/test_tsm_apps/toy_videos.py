"""Toy motion clips for tests and smoke runs: a bright square moving left or right.

Every frame of a "left" clip could also be a frame of a "right" clip, so only temporal
modelling separates the classes. ``write_frame_folders`` stores them as JPEG frame folders
(``img_00001.jpg``...) with TSM list files, which needs no video codec.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch
from torch import Tensor


def motion_videos(n: int, frames: int = 8, size: int = 32, seed: int = 0) -> tuple:
    """``(uint8 (n, frames, size, size, 3), labels)``; label 0 moves right, 1 moves left."""
    g = np.random.default_rng(seed)
    videos = np.zeros((n, frames, size, size, 3), np.uint8)
    labels = [i % 2 for i in range(n)]
    side = max(2, size // 5)
    for i, lab in enumerate(labels):
        videos[i] = g.integers(0, 60, 3, dtype=np.uint8)
        y = int(g.integers(0, size - side))
        span = size - side
        for f in range(frames):
            x = round(span * f / max(frames - 1, 1))
            x = x if lab == 0 else span - x
            videos[i, f, y : y + side, x : x + side] = 255
    return torch.from_numpy(videos), labels


def write_frame_folders(
    out_dir: str | os.PathLike, videos: Tensor, labels: list, val_every: int = 4
) -> Path:
    """Write frame folders and ``train.txt``/``val.txt`` (every ``val_every``-th pair is val)."""
    from PIL import Image

    out = Path(out_dir)
    lines: dict = {"train": [], "val": []}
    for i, (v, lab) in enumerate(zip(videos.numpy(), labels)):
        split = "val" if (i // 2) % val_every == 0 else "train"
        rel = Path("frames") / f"{split}_{i:04d}"
        (out / rel).mkdir(parents=True, exist_ok=True)
        for f, img in enumerate(v):
            Image.fromarray(img).save(out / rel / f"img_{f + 1:05d}.jpg", quality=95)
        lines[split].append(f"{rel.as_posix()} {len(v)} {lab}")
    for split, rows in lines.items():
        (out / f"{split}.txt").write_text("\n".join(rows) + "\n")
    return out
