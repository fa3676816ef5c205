"""Display of maps over frames: normalisation (display only), a colour map, PNG strips, GIFs.

Frames are uint8 ``(T, H, W, 3)`` RGB; maps float ``(T, H, W)`` raw. Normalisation to ``[0, 1]``
happens here and only here, per clip (one scale for all frames, so temporal changes stay
visible) or per frame.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Optional

import numpy as np
from PIL import Image

from .storage import atomic_write_with

DEFAULT_ALPHA = 0.5
GIF_FPS = 4
BOX_COLOUR = (0, 255, 0)
# piecewise-linear "jet": dark blue -> blue -> cyan -> yellow -> red -> dark red
_JET = np.array(
    [[0, 0, 128], [0, 0, 255], [0, 255, 255], [255, 255, 0], [255, 0, 0], [128, 0, 0]], np.float64
)


def normalize_for_display(maps: np.ndarray, per: str = "clip") -> np.ndarray:
    """Min-max scale ``(T, H, W)`` maps to ``[0, 1]`` per clip or per frame (constant -> 0)."""
    m = np.asarray(maps, np.float64)
    if m.ndim != 3:
        raise ValueError(f"maps must be (T, H, W), got shape {m.shape}")
    axes = {"clip": None, "frame": (1, 2)}
    if per not in axes:
        raise ValueError(f"per must be 'clip' or 'frame', got {per!r}")
    lo = m.min(axis=axes[per], keepdims=True)
    span = m.max(axis=axes[per], keepdims=True) - lo
    return np.where(span > 0, (m - lo) / np.where(span > 0, span, 1), 0.0)


def colorize(unit: np.ndarray) -> np.ndarray:
    """Values in ``[0, 1]`` -> uint8 RGB with the jet colour map (shape ``(..., 3)``)."""
    x = np.clip(np.asarray(unit, np.float64), 0, 1) * (len(_JET) - 1)
    i = np.minimum(x.astype(int), len(_JET) - 2)
    f = (x - i)[..., None]
    return np.round(_JET[i] * (1 - f) + _JET[i + 1] * f).astype(np.uint8)


def draw_box(img: np.ndarray, box, colour=BOX_COLOUR) -> None:
    """Draw a 1-px box outline ``[x1, y1, x2, y2]`` on an ``(H, W, 3)`` image in place."""
    if box is None or np.isnan(np.asarray(box, np.float64)).any():
        return
    h, w = img.shape[:2]
    x1, y1, x2, y2 = (int(round(float(v))) for v in box)
    x1, x2 = np.clip([x1, x2 - 1], 0, w - 1)
    y1, y2 = np.clip([y1, y2 - 1], 0, h - 1)
    img[y1, x1 : x2 + 1] = img[y2, x1 : x2 + 1] = colour
    img[y1 : y2 + 1, x1] = img[y1 : y2 + 1, x2] = colour


def overlay(
    frames: np.ndarray,
    maps: np.ndarray,
    per: str = "clip",
    alpha: float = DEFAULT_ALPHA,
    boxes: Optional[np.ndarray] = None,
) -> np.ndarray:
    """Blend coloured maps over frames: ``(T, H, W, 3)`` uint8 (GT boxes drawn when given)."""
    frames = np.asarray(frames)
    if frames.ndim != 4 or frames.shape[:3] != np.asarray(maps).shape:
        raise ValueError(
            f"frames (T, H, W, 3) {frames.shape} and maps (T, H, W) "
            f"{np.asarray(maps).shape} must match"
        )
    heat = colorize(normalize_for_display(maps, per)).astype(np.float64)
    out = np.round(frames * (1 - alpha) + heat * alpha).astype(np.uint8)
    if boxes is not None:
        for img, box in zip(out, boxes):
            draw_box(img, box)
    return out


def overlay_in_frame(
    frames: np.ndarray,
    maps: np.ndarray,
    view,
    per: str = "clip",
    alpha: float = DEFAULT_ALPHA,
    dim: float = 0.5,
    colour=(255, 255, 255),
) -> np.ndarray:
    """Maps over the whole frames as they are: ``frames (T, H, W, 3)`` uint8 at any size,
    ``maps (T, S, S)`` of the view the model saw, ``view = (x0, y0, x1, y1)`` that view's box in
    these frames' pixels. The maps are resized onto the box (the frame's aspect kept), the
    rest of the frame is dimmed by ``dim`` and the box outlined: ``(T, H, W, 3)`` uint8."""
    frames, maps = np.asarray(frames), np.asarray(maps)
    if frames.ndim != 4 or maps.ndim != 3 or len(frames) != len(maps):
        raise ValueError(
            f"frames (T, H, W, 3) {frames.shape} and maps (T, S, S) {maps.shape} "
            "must have the same T"
        )
    h, w = frames.shape[1:3]
    x0, y0, x1, y1 = (int(round(float(v))) for v in view)
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(max(x1, x0 + 1), w), min(max(y1, y0 + 1), h)
    heat = colorize(normalize_for_display(maps, per))  # (T, S, S, 3)
    out = np.round(frames * (1 - dim)).astype(np.uint8)
    for t in range(len(frames)):
        patch = np.asarray(Image.fromarray(heat[t]).resize((x1 - x0, y1 - y0), Image.BILINEAR))
        inside = frames[t, y0:y1, x0:x1].astype(np.float64)
        out[t, y0:y1, x0:x1] = np.round(inside * (1 - alpha) + patch * alpha).astype(np.uint8)
        draw_box(out[t], (x0, y0, x1, y1), colour)
    return out


def strip(images: np.ndarray, gap: int = 2) -> np.ndarray:
    """``(T, H, W, 3)`` -> one ``(H, T*W + (T-1)*gap, 3)`` image, frames left to right."""
    t, h, w, _ = images.shape
    out = np.full((h, t * w + (t - 1) * gap, 3), 255, np.uint8)
    for i, img in enumerate(images):
        out[:, i * (w + gap) : i * (w + gap) + w] = img
    return out


def write_png(path: str | os.PathLike, image: np.ndarray) -> Path:
    return atomic_write_with(path, lambda buf: Image.fromarray(image).save(buf, format="PNG"))


def write_gif(path: str | os.PathLike, images: np.ndarray, fps: int = GIF_FPS) -> Path:
    """Animated GIF of ``(T, H, W, 3)`` uint8 frames, looping."""
    pics = [Image.fromarray(img) for img in images]

    def write(buf: io.BytesIO) -> None:
        pics[0].save(
            buf,
            format="GIF",
            save_all=True,
            append_images=pics[1:],
            duration=int(1000 / fps),
            loop=0,
        )

    return atomic_write_with(path, write)
