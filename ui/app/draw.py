"""Pictures for the page: boxes (drawn by :func:`tsm_apps.viz.draw_boxes`, the one box-drawing
helper, in the colours of :mod:`ui.models`) and upscaling of tiny frames.

Frames are uint8 ``(H, W, 3)`` RGB; boxes ``(K, 4)`` pixel ``x1, y1, x2, y2``. Functions return
new arrays. (Attention overlays are drawn by :mod:`dissect.overlay`.)
"""
from __future__ import annotations

import numpy as np

from tsm_apps.viz import check_frame, draw_boxes

__all__ = ["draw_boxes", "upscale"]


def upscale(frame: np.ndarray, min_width: int) -> np.ndarray:
    """Nearest-neighbour upscale by an integer factor so tiny frames are visible on the page."""
    arr = check_frame(frame)
    k = max(1, -(-min_width // arr.shape[1]))
    return arr if k == 1 else arr.repeat(k, axis=0).repeat(k, axis=1)
