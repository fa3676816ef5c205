"""Resizing a clip's frames, exactly as each reference pipeline does it.

Backends (uint8 ``(N, H, W, C)`` in, uint8 out, ``C`` = 3 for RGB or 2 for flow x/y):

* ``"pil"``: PIL bilinear per frame (antialiased when shrinking) -- what torchvision's
  ``Resize`` does to PIL images, so the official TSM repository's ``GroupScale`` exactly; flow
  channels are resized one by one as 8-bit images, as the official code reads them.
* ``"cv2"``: OpenCV ``INTER_LINEAR`` (no antialiasing) -- ``mmcv.imresize``'s bilinear, the
  resize of mmaction2's ``Resize``.
* ``"torch"``: ``F.interpolate(bilinear, antialias=True)``, rounded to uint8.

Output sizes for "shorter side to ``s``" (:func:`short_side_size`): torchvision truncates the
longer side (``int(s * long / short)``), mmcv's ``rescale_size`` rounds it
(``int(long * s / short + 0.5)``).
"""

from __future__ import annotations

from typing import Tuple

import numpy as np
import torch
from torch.nn import functional as F

RESIZE_BACKENDS = ("pil", "cv2", "torch")
SIZE_ROUNDING = ("floor", "round")

__all__ = ["RESIZE_BACKENDS", "SIZE_ROUNDING", "check_frames", "resize_frames", "short_side_size"]


def check_frames(frames: np.ndarray) -> np.ndarray:
    """``frames`` if it is uint8 ``(N, H, W, C)`` with ``C`` 3 (RGB) or 2 (flow), else ValueError."""
    if (
        not isinstance(frames, np.ndarray)
        or frames.dtype != np.uint8
        or frames.ndim != 4
        or frames.shape[-1] not in (2, 3)
    ):
        got = f"{frames.dtype} {frames.shape}" if isinstance(frames, np.ndarray) else type(frames)
        raise ValueError(f"expected uint8 frames (N, H, W, 3) or flow (N, H, W, 2), got {got}")
    return frames


def short_side_size(h: int, w: int, short: int, rounding: str = "floor") -> Tuple[int, int]:
    """``(new_h, new_w)`` with the shorter side ``short`` and the aspect kept (see module doc)."""
    if rounding not in SIZE_ROUNDING:
        raise ValueError(f"rounding must be one of {SIZE_ROUNDING}, got {rounding!r}")
    if h < 1 or w < 1 or short < 1:
        raise ValueError(f"cannot scale a {h}x{w} frame to a shorter side of {short}")
    if rounding == "floor":  # torchvision: the short side exactly, the long side truncated
        return (short, int(short * w / h)) if h <= w else (int(short * h / w), short)
    f = short / min(h, w)  # mmcv.rescale_size with scale (inf, short)
    return int(h * f + 0.5), int(w * f + 0.5)


def _pil(frames: np.ndarray, h: int, w: int) -> np.ndarray:
    from PIL import Image

    out = np.empty((len(frames), h, w, frames.shape[-1]), np.uint8)
    for i, f in enumerate(frames):
        if f.shape[-1] == 3:
            out[i] = np.asarray(Image.fromarray(f).resize((w, h), Image.BILINEAR))
        else:
            for c in range(f.shape[-1]):
                img = Image.fromarray(np.ascontiguousarray(f[..., c]))
                out[i, ..., c] = np.asarray(img.resize((w, h), Image.BILINEAR))
    return out


def _cv2(frames: np.ndarray, h: int, w: int) -> np.ndarray:
    import cv2

    return np.stack(
        [cv2.resize(f, (w, h), interpolation=cv2.INTER_LINEAR).reshape(h, w, -1) for f in frames]
    )


def _torch(frames: np.ndarray, h: int, w: int) -> np.ndarray:
    x = torch.from_numpy(np.ascontiguousarray(frames)).permute(0, 3, 1, 2).float()
    x = F.interpolate(x, size=(h, w), mode="bilinear", align_corners=False, antialias=True)
    return x.round_().clamp_(0, 255).to(torch.uint8).permute(0, 2, 3, 1).contiguous().numpy()


def resize_frames(frames: np.ndarray, size: Tuple[int, int], backend: str = "pil") -> np.ndarray:
    """Bilinear resize of uint8 ``(N, H, W, C)`` to ``size = (h, w)`` with ``backend``."""
    check_frames(frames)
    if backend not in RESIZE_BACKENDS:
        raise ValueError(f"resize backend must be one of {RESIZE_BACKENDS}, got {backend!r}")
    h, w = int(size[0]), int(size[1])
    if frames.shape[1:3] == (h, w):
        return frames
    return {"pil": _pil, "cv2": _cv2, "torch": _torch}[backend](frames, h, w)
