"""Pictures for the page: boxes (drawn by :func:`tsm_apps.viz.draw_boxes`, the one box-drawing
helper, in the colours of :mod:`ui.models`) and upscaling of tiny frames.

Frames are uint8 ``(H, W, 3)`` RGB; boxes ``(K, 4)`` pixel ``x1, y1, x2, y2``. Functions return
new arrays, or the encoded picture the page gets (:func:`shown`). (Attention overlays are drawn
by :mod:`dissect.overlay`.)
"""

from __future__ import annotations

import io

import numpy as np

from tsm_apps.data.decoder import check_frame
from tsm_apps.viz import draw_boxes

__all__ = ["draw_boxes", "upscale", "shown"]

JPEG_QUALITY = 85


def upscale(frame: np.ndarray, min_width: int) -> np.ndarray:
    """Nearest-neighbour upscale by an integer factor so tiny frames are visible on the page."""
    arr = check_frame(frame)
    k = max(1, -(-min_width // arr.shape[1]))
    return arr if k == 1 else arr.repeat(k, axis=0).repeat(k, axis=1)


def shown(frame: np.ndarray, width: int, quality: int = JPEG_QUALITY) -> bytes:
    """The frame as the page shows it: scaled down (bilinear) to ``width`` pixels when wider,
    encoded once as JPEG. Streamlit passes JPEG bytes through as they are; a numpy image it
    encodes at quality 100, decodes again and re-encodes at the shown width (every frame of a
    live stream: docs/history/app-before-webrtc.md §6.4)."""
    from PIL import Image

    img = Image.fromarray(np.ascontiguousarray(check_frame(frame)))
    if img.width > width:
        img = img.resize(
            (width, max(1, round(img.height * width / img.width))), Image.Resampling.BILINEAR
        )
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=quality)
    return buf.getvalue()
