"""Drawing helpers shared by the synthetic data generators: cluttered backgrounds, polygons
placed by centre/size/angle, their boxes, atomic text files and mp4 writing.

Coordinates are pixel *edges* (``x`` right, ``y`` down, the frame spans ``[0, W] x [0, H]``).
A positive angle turns a shape clockwise on screen (``y`` points down).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

# Unit "L" (side 1, centred): no rotational symmetry, so the turning direction is visible.
L_SHAPE = np.array(
    [(-0.5, -0.5), (-0.1, -0.5), (-0.1, 0.15), (0.5, 0.15), (0.5, 0.5), (-0.5, 0.5)], np.float64
)
# Radius of the smallest circle about the centre that holds the L at any angle.
L_RADIUS = float(np.hypot(0.5, 0.5))
CRF = 0  # lossless: decoded frames equal the rendered ones (after 4:2:0), whatever x264 decides


def place(
    shape: np.ndarray, cx: float, cy: float, side: float, angle_deg: float = 0.0
) -> np.ndarray:
    """Vertices ``(K, 2)`` of a unit ``shape`` scaled to ``side`` pixels, turned clockwise by
    ``angle_deg`` and centred on ``(cx, cy)``."""
    a = np.deg2rad(angle_deg)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    return shape @ rot.T * side + np.array([cx, cy])


def bbox(points: np.ndarray, width: int, height: int) -> list:
    """Integer edge box ``[x1, y1, x2, y2]`` enclosing ``points (K, 2)``, clipped to the frame."""
    x1, y1 = np.floor(points.min(0))
    x2, y2 = np.ceil(points.max(0))
    return [
        int(np.clip(x1, 0, width)),
        int(np.clip(y1, 0, height)),
        int(np.clip(x2, 0, width)),
        int(np.clip(y2, 0, height)),
    ]


def overlaps(a: Sequence[float], b: Sequence[float], gap: float = 0.0) -> bool:
    """Whether edge boxes ``a`` and ``b`` (``[x1, y1, x2, y2]``) come closer than ``gap``."""
    return not (
        a[2] + gap <= b[0] or b[2] + gap <= a[0] or a[3] + gap <= b[1] or b[3] + gap <= a[1]
    )


def clutter(
    rng: np.random.Generator, width: int, height: int, items: int = 24, contrast: float = 1.0
):
    """A cluttered, muted random texture as a PIL RGB image of ``width x height``: smooth
    colour noise, random thin bars, rings and blobs, then fine pixel noise."""
    from PIL import Image, ImageDraw

    grid = rng.uniform(70, 150, (rng.integers(4, 9), rng.integers(4, 9), 3))
    img = Image.fromarray(grid.astype(np.uint8)).resize((width, height), Image.BILINEAR)
    draw = ImageDraw.Draw(img)
    lw = max(1, round(min(width, height) / 56))
    for _ in range(items):
        col = tuple(int(v) for v in rng.uniform(60, 170, 3) * contrast + 110 * (1 - contrast))
        x, y = rng.uniform(0, width), rng.uniform(0, height)
        r = rng.uniform(0.03, 0.12) * min(width, height)
        kind = rng.integers(3)
        if kind == 0:
            x2, y2 = x + rng.uniform(-3, 3) * r, y + rng.uniform(-3, 3) * r
            draw.line([(x, y), (x2, y2)], fill=col, width=lw)
        elif kind == 1:
            draw.ellipse([x - r, y - r, x + r, y + r], outline=col, width=lw)
        else:
            draw.rectangle([x - r, y - r * 0.5, x + r, y + r * 0.5], fill=col)
    arr = np.asarray(img, np.float64) + rng.normal(0, 6, (height, width, 3))
    return Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8))


def write_mp4(path: Path, frames: np.ndarray, fps: int) -> Path:
    """Encode uint8 ``(T, H, W, 3)`` RGB frames as lossless H.264 mp4 (yuv420p, one keyframe a
    second, one encoder thread), atomically (:func:`tsm_apps.data.video_writer.write_video`).

    Lossless because x264 (as built into PyAV here) is not bit-reproducible: the same frames
    encoded twice at crf 18 sometimes decode to frames a few levels apart. At crf 0 every
    encoding decodes to the same pixels (the rendered frames after 4:2:0 chroma subsampling),
    so the set's decoded frames are a function of the seed. Synthetic clips stay small
    (~33 KB for 16 frames at 112x112)."""
    from ..data.video_writer import write_video

    return write_video(path, frames, fps, crf=CRF, keyframe_interval=max(1, int(fps)), threads=1)
