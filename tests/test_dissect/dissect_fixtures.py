"""Tiny models and a tiny annotated video set for the dissect tests."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch

from tsm_apps import build_recognizer
from tsm_apps.data.protocol import TestProtocol

NUM_CLASSES = 5
SEGMENTS = 4
SIZE = 64
# our checkpoints record the test protocol of their training; these tiny ones: frames as stored
AS_STORED = {"test_protocol": TestProtocol(scale_size=SIZE, crop_size=SIZE).to_dict()}


def tiny_model(shift="offline", seed: int = 0, **kw) -> torch.nn.Module:
    """ResNet-18 at width 1/8 with a non-trivial fc (the builder's fc init is near zero)."""
    torch.manual_seed(seed)
    m = build_recognizer(
        "resnet18", num_classes=NUM_CLASSES, num_segments=SEGMENTS, shift=shift, width=0.125, **kw
    )
    with torch.no_grad():
        m.fc.weight.normal_()
        m.fc.bias.normal_()
    return m.eval()


def write_tiny_set(root: Path, n: int = 3, frames: int = 8, corrupt: int | None = None) -> Path:
    """``n`` clips as official-style frame folders (``img_00001.jpg``...), 8 frames of 64x64 with
    a bright square moving right, ``val.txt`` and ``annotations.json``; in clip ``corrupt``
    (index) every frame file holds garbage bytes."""
    from PIL import Image

    rng = np.random.default_rng(0)
    videos, lines = {}, []
    for i in range(n):
        rel = f"videos/val_{i:05d}"
        (root / rel).mkdir(parents=True, exist_ok=True)
        boxes, arr = [], rng.integers(0, 60, (frames, SIZE, SIZE, 3), dtype=np.uint8)
        for t in range(frames):
            x = 4 + 5 * t
            arr[t, 20:36, x : x + 16] = 255
            boxes.append([x, 20, x + 16, 36])
            f = root / rel / f"img_{t + 1:05d}.jpg"
            if i == corrupt:
                f.write_bytes(b"not an image")
            else:
                Image.fromarray(arr[t]).save(f, quality=95)
        label = i % NUM_CLASSES
        lines.append(f"{rel} {frames} {label}")
        videos[rel] = {
            "label": label,
            "class": f"c{label}",
            "boxes": boxes,
            "active": [3 <= t < 6 for t in range(frames)],
        }
    (root / "val.txt").write_text("\n".join(lines) + "\n")
    ann = {"classes": [f"c{k}" for k in range(NUM_CLASSES)], "videos": videos}
    (root / "annotations.json").write_text(json.dumps(ann))
    return root


def write_flow_folder(
    folder: Path, fields: int, size: int = SIZE, seed: int = 0, constant: bool = False
) -> Path:
    """``fields`` flow fields as ``tsm flow extract`` names them (``flow_x_00001.jpg``...).

    ``constant``: field ``k`` (0-based) is x = 20 + 10 k, y = 200 - 10 k everywhere (the field
    read is visible in the input); else 8x8 blocks of seeded random values (JPEG keeps them
    exactly). Returns ``folder``."""
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    for k in range(fields):
        for axis, value in (("x", 20 + 10 * k), ("y", 200 - 10 * k)):
            if constant:
                img = np.full((size, size), value, np.uint8)
            else:
                blocks = rng.integers(0, 256, (size // 8, size // 8), dtype=np.uint8)
                img = np.kron(blocks, np.ones((8, 8), np.uint8))
            Image.fromarray(img).save(folder / f"flow_{axis}_{k + 1:05d}.jpg", quality=100)
    return folder


def read_flow_by_hand(folder: Path, field: int) -> tuple:
    """Field ``field`` (0-based) of ``folder`` as float ``(x, y)`` arrays, read with PIL."""
    from PIL import Image

    return tuple(
        np.asarray(Image.open(folder / f"flow_{a}_{field + 1:05d}.jpg"), np.float64)
        for a in ("x", "y")
    )
