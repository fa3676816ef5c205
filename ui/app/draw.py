"""Pictures for the page: detection boxes with class and score drawn on frames.

Frames are uint8 ``(H, W, 3)`` RGB; boxes ``(K, 4)`` pixel ``x1, y1, x2, y2``. Functions return
new arrays. (Attention overlays are drawn by :mod:`dissect.overlay`.)
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
from PIL import Image, ImageDraw

MODEL_COLORS = {"TSN": (31, 119, 180), "TSM": (214, 39, 40)}
GT_COLOR = (44, 160, 44)


def _check_frame(frame: np.ndarray) -> np.ndarray:
    arr = np.asarray(frame)
    if arr.dtype != np.uint8 or arr.ndim != 3 or arr.shape[-1] != 3:
        raise ValueError(f"frame must be uint8 (H, W, 3), got {arr.dtype} {arr.shape}")
    return arr


def draw_boxes(frame: np.ndarray, boxes: np.ndarray, captions: Sequence[str],
               color: tuple = GT_COLOR, width: int = 2) -> np.ndarray:
    """``frame`` with ``boxes`` ``(K, 4)`` outlined in ``color`` and ``captions[k]`` above each."""
    arr = _check_frame(frame)
    boxes = np.asarray(boxes, dtype=np.float32).reshape(-1, 4)
    if len(captions) != len(boxes):
        raise ValueError(f"{len(boxes)} boxes but {len(captions)} captions")
    img = Image.fromarray(arr)
    pen = ImageDraw.Draw(img)
    for (x1, y1, x2, y2), text in zip(boxes.tolist(), captions):
        pen.rectangle([x1, y1, x2, y2], outline=color, width=width)
        if text:
            left, top, right, bottom = pen.textbbox((x1, y1), text)
            ty = y1 - (bottom - top) - 2 if y1 - (bottom - top) - 2 >= 0 else y1
            pen.rectangle([x1, ty, x1 + (right - left) + 4, ty + (bottom - top) + 2], fill=color)
            pen.text((x1 + 2, ty), text, fill=(255, 255, 255))
    return np.asarray(img)


def upscale(frame: np.ndarray, min_width: int) -> np.ndarray:
    """Nearest-neighbour upscale by an integer factor so tiny frames are visible on the page."""
    arr = _check_frame(frame)
    k = max(1, -(-min_width // arr.shape[1]))
    return arr if k == 1 else arr.repeat(k, axis=0).repeat(k, axis=1)
