"""Pictures for the page: the models' colours, boxes (drawn by :func:`tsm_apps.viz.draw_boxes`,
the one box-drawing helper) and upscaling of tiny frames.

Frames are uint8 ``(H, W, 3)`` RGB; boxes ``(K, 4)`` pixel ``x1, y1, x2, y2``. Functions return
new arrays. (Attention overlays are drawn by :mod:`dissect.overlay`.)
"""
from __future__ import annotations

import numpy as np

from tsm_apps.viz import check_frame, draw_boxes

__all__ = ["MODEL_COLORS", "GT_COLOR", "draw_boxes", "upscale"]

MODEL_COLORS = {"TSN": (31, 119, 180), "TSM": (214, 39, 40)}
GT_COLOR = (44, 160, 44)


def upscale(frame: np.ndarray, min_width: int) -> np.ndarray:
    """Nearest-neighbour upscale by an integer factor so tiny frames are visible on the page."""
    arr = check_frame(frame)
    k = max(1, -(-min_width // arr.shape[1]))
    return arr if k == 1 else arr.repeat(k, axis=0).repeat(k, axis=1)
