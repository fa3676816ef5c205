"""Pictures: boxes with captions drawn on frames, shared by the detector's renderer and the app.

Frames are uint8 ``(H, W, 3)`` RGB; boxes ``(K, 4)`` pixel ``x1, y1, x2, y2``. Functions return
new arrays and never change their input.
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
from PIL import Image, ImageDraw


def check_frame(frame: np.ndarray) -> np.ndarray:
    """``frame`` as a uint8 ``(H, W, 3)`` array; TypeError/ValueError naming what it is."""
    arr = np.asarray(frame)
    if arr.dtype != np.uint8 or arr.ndim != 3 or arr.shape[-1] != 3:
        raise ValueError(f"frame must be uint8 (H, W, 3), got {arr.dtype} {arr.shape}")
    return arr


def draw_boxes(frame: np.ndarray, boxes: np.ndarray, captions: Sequence[str],
               color: tuple = (44, 160, 44), width: Optional[int] = 2) -> np.ndarray:
    """``frame`` with ``boxes`` ``(K, 4)`` outlined in ``color`` and ``captions[k]`` on a filled
    label above each box (inside it at the top edge). ``width=None``: about 1/160 of the
    shorter side."""
    arr = check_frame(frame)
    boxes = np.asarray(boxes, dtype=np.float32).reshape(-1, 4)
    if len(captions) != len(boxes):
        raise ValueError(f"{len(boxes)} boxes but {len(captions)} captions")
    img = Image.fromarray(np.ascontiguousarray(arr))
    width = max(1, round(min(img.size) / 160)) if width is None else width
    pen = ImageDraw.Draw(img)
    for (x1, y1, x2, y2), text in zip(boxes.tolist(), captions):
        pen.rectangle([x1, y1, x2, y2], outline=color, width=width)
        if text:
            left, top, right, bottom = pen.textbbox((x1, y1), text)
            ty = y1 - (bottom - top) - 2 if y1 - (bottom - top) - 2 >= 0 else y1
            pen.rectangle([x1, ty, x1 + (right - left) + 4, ty + (bottom - top) + 2], fill=color)
            pen.text((x1 + 2, ty), text, fill=(255, 255, 255))
    return np.asarray(img)
