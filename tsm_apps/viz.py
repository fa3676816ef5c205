"""Pictures: boxes with captions drawn on frames, shared by the detector's renderer and the app.

Frames are uint8 ``(H, W, 3)`` RGB; boxes ``(K, 4)`` pixel ``x1, y1, x2, y2``. Functions return
new arrays and never change their input.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
from PIL import Image, ImageDraw

from .data.decoder import check_frame


def draw_boxes(
    frame: np.ndarray,
    boxes: np.ndarray,
    captions: Sequence[str],
    color: tuple = (44, 160, 44),
    width: Optional[int] = 2,
) -> np.ndarray:
    """``frame`` with ``boxes`` ``(K, 4)`` outlined in ``color`` and ``captions[k]`` on a filled
    label at each box (:func:`place_labels`: above its top edge, else inside it, else at its
    bottom edge; a label that would cover another one is left out, so put the most important
    caption first — e.g. boxes by descending score). ``width=None``: about 1/160 of the shorter
    side."""
    arr = check_frame(frame)
    boxes = np.asarray(boxes, dtype=np.float32).reshape(-1, 4)
    if len(captions) != len(boxes):
        raise ValueError(f"{len(boxes)} boxes but {len(captions)} captions")
    img = Image.fromarray(np.ascontiguousarray(arr))
    width = max(1, round(min(img.size) / 160)) if width is None else width
    pen = ImageDraw.Draw(img)
    for x1, y1, x2, y2 in boxes.tolist():
        pen.rectangle([x1, y1, x2, y2], outline=color, width=width)
    sizes = []
    for text in captions:
        left, top, right, bottom = pen.textbbox((0, 0), text) if text else (0, 0, 0, 0)
        sizes.append((right - left + 4, bottom - top + 2) if text else (0, 0))
    for text, spot in zip(captions, place_labels(boxes, sizes, img.size)):
        if text and spot is not None:
            pen.rectangle([spot[0], spot[1], spot[2] - 1, spot[3] - 1], fill=color)  # half-open
            pen.text((spot[0] + 2, spot[1]), text, fill=(255, 255, 255))
    return np.asarray(img)


def place_labels(
    boxes: np.ndarray, sizes: Sequence[tuple], image_size: tuple
) -> list[Optional[tuple]]:
    """Where each box's label goes, ``(x1, y1, x2, y2)`` pixel edges, or None when it would
    cover a label already placed (or has no text: size ``(0, 0)``). Labels are placed in the
    order given; each tries, left-aligned with its box: just above the box, inside its top
    edge, inside its bottom edge, just below it — kept inside the image."""
    placed: list = []
    out: list = []
    W, H = image_size
    for (x1, y1, x2, y2), (w, h) in zip(np.asarray(boxes, float).reshape(-1, 4).tolist(), sizes):
        if w <= 0 or h <= 0:
            out.append(None)
            continue
        left = min(max(x1, 0.0), max(W - w, 0.0))
        spot = None
        for top in (y1 - h - 1, y1, y2 - h, y2 + 1):
            cand = (left, top, left + w, top + h)
            if top >= 0 and top + h <= H and not any(_overlap(cand, p) for p in placed):
                spot = cand
                break
        out.append(spot)
        if spot is not None:
            placed.append(spot)
    return out


def _overlap(a: tuple, b: tuple) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
