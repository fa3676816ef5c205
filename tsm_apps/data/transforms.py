"""Group transforms: the same crop box, scale and flip for every frame of a clip.

A transform is a callable ``(frames, rng) -> frames`` on uint8 numpy ``(N, H, W, C)`` (``C`` = 3
RGB, or 2 for flow x/y fields) with an explicit ``numpy.random.Generator`` (one draw per clip,
never per frame). :class:`GroupViews` returns ``(K*N, h, w, C)``, the ``N`` frames of each view
contiguous. :class:`ToTensor` turns frames into float ``(N, C, H, W)`` in ``[0, 1]``;
:class:`Normalize` then works on that tensor. Sizes are ints (square) or ``(height, width)``.
Geometry follows the official TSM ``ops/transforms.py`` (multi-scale crop with the 13 fixed
offsets, scales 1, .875, .75, .66; test views in :mod:`tsm_apps.data.crops`); resizing is
:mod:`tsm_apps.data.resize`. Mirroring a flow clip also inverts its x fields (``255 - x``), as
the official ``GroupRandomHorizontalFlip(is_flow=True)`` does.
"""

from __future__ import annotations

import math
from typing import Optional, Sequence, Union

import numpy as np
import torch

from .crops import centre_offset, fixed_offsets, view_offsets
from .normalization import IMAGENET_MEAN, IMAGENET_STD, Stat, modality_stats, normalize
from .resize import check_frames, resize_frames, short_side_size

MULTI_SCALES = (1.0, 0.875, 0.75, 0.66)
Size = Union[int, Sequence[int]]

__all__ = [
    "Compose",
    "GroupScale",
    "GroupCenterCrop",
    "GroupRandomCrop",
    "GroupMultiScaleCrop",
    "GroupRandomResizedCrop",
    "GroupRandomHorizontalFlip",
    "GroupViews",
    "ToTensor",
    "ToUint8Tensor",
    "Normalize",
    "mirror",
    "train_transform",
    "MULTI_SCALES",
    "TRAIN_CROPS",
]

TRAIN_CROPS = ("area", "multiscale")


def _hw(size: Size) -> tuple:
    if isinstance(size, (int, np.integer)):
        return int(size), int(size)
    h, w = size
    return int(h), int(w)


def _crop(frames: np.ndarray, y: int, x: int, h: int, w: int) -> np.ndarray:
    H, W = frames.shape[1:3]
    if h > H or w > W or y < 0 or x < 0 or y + h > H or x + w > W:
        raise ValueError(f"crop {h}x{w} at (y={y}, x={x}) does not fit frames of {H}x{W}")
    return frames[:, y : y + h, x : x + w]


def mirror(frames: np.ndarray) -> np.ndarray:
    """Left-right mirror of uint8 ``(N, H, W, C)``; flow (``C == 2``) also gets ``x -> 255 - x``."""
    out = np.ascontiguousarray(frames[:, :, ::-1])
    if out.shape[-1] == 2:
        out[..., 0] = 255 - out[..., 0]
    return out


class Compose:
    """Apply transforms in order, passing the same ``rng`` to each."""

    def __init__(self, transforms: Sequence) -> None:
        self.transforms = list(transforms)

    def __call__(self, frames, rng: Optional[np.random.Generator] = None):
        for t in self.transforms:
            frames = t(frames, rng)
        return frames


class GroupScale:
    """Resize so the shorter side is ``size`` (int; the longer side by ``rounding``, see
    :func:`~tsm_apps.data.resize.short_side_size`) or to exactly ``(h, w)``, with ``backend``."""

    def __init__(self, size: Size, backend: str = "pil", rounding: str = "floor") -> None:
        self.size, self.backend, self.rounding = size, backend, rounding

    def output_size(self, H: int, W: int) -> tuple:
        if isinstance(self.size, (int, np.integer)):
            return short_side_size(H, W, int(self.size), self.rounding)
        return _hw(self.size)

    def __call__(self, frames: np.ndarray, rng=None) -> np.ndarray:
        H, W = check_frames(frames).shape[1:3]
        return resize_frames(frames, self.output_size(H, W), self.backend)


class GroupCenterCrop:
    """The central ``size`` crop; offsets rounded (``"official"``) or floored (``"mmaction2"``)."""

    def __init__(self, size: Size, style: str = "official") -> None:
        self.size, self.style = _hw(size), style

    def __call__(self, frames: np.ndarray, rng=None) -> np.ndarray:
        H, W = check_frames(frames).shape[1:3]
        h, w = self.size
        return _crop(frames, *centre_offset(H, W, h, w, self.style), h, w)


class GroupRandomCrop:
    """A ``size`` crop at a uniformly random position (one position for the whole clip)."""

    def __init__(self, size: Size) -> None:
        self.size = _hw(size)

    def __call__(self, frames: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        H, W = check_frames(frames).shape[1:3]
        h, w = self.size
        if h > H or w > W:
            raise ValueError(f"random crop {h}x{w} does not fit frames of {H}x{W}")
        y, x = int(rng.integers(0, H - h + 1)), int(rng.integers(0, W - w + 1))
        return _crop(frames, y, x, h, w)


class GroupMultiScaleCrop:
    """TSN/TSM multi-scale crop: a crop side ``int(min(H, W) * s)`` for height and for width from
    ``scales`` (sides within 3 px of the output snap to it), the two scale indices at most
    ``max_distort`` apart, placed at one of the fixed offsets (or anywhere when not
    ``fix_crop``), then resized to ``size``."""

    def __init__(
        self,
        size: Size,
        scales: Sequence[float] = MULTI_SCALES,
        max_distort: int = 1,
        fix_crop: bool = True,
        more_fix_crop: bool = True,
        backend: str = "pil",
    ) -> None:
        self.size = _hw(size)
        self.scales = tuple(scales)
        self.max_distort, self.fix_crop, self.more_fix_crop = max_distort, fix_crop, more_fix_crop
        self.backend = backend

    def crop_pairs(self, H: int, W: int) -> list:
        """Candidate ``(crop_h, crop_w)`` pairs for frames of ``H x W``."""
        sides = [int(min(H, W) * s) for s in self.scales]
        ch = [self.size[0] if abs(s - self.size[0]) < 3 else s for s in sides]
        cw = [self.size[1] if abs(s - self.size[1]) < 3 else s for s in sides]
        return [
            (h, w)
            for i, h in enumerate(ch)
            for j, w in enumerate(cw)
            if abs(i - j) <= self.max_distort
        ]

    def __call__(self, frames: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        H, W = check_frames(frames).shape[1:3]
        pairs = self.crop_pairs(H, W)
        h, w = pairs[int(rng.integers(len(pairs)))]
        if self.fix_crop:
            offs = fixed_offsets(H, W, h, w, self.more_fix_crop)
            y, x = offs[int(rng.integers(len(offs)))]
        else:
            y, x = int(rng.integers(0, H - h + 1)), int(rng.integers(0, W - w + 1))
        return resize_frames(_crop(frames, y, x, h, w), self.size, self.backend)


class GroupRandomResizedCrop:
    """A random box covering ``[min_area, 1]`` of the frame area with aspect ``3/4 .. 4/3``
    (log-uniform), clamped to the frame, then resized to ``size`` (Inception-style crop)."""

    def __init__(self, size: Size, min_area: float = 0.5, backend: str = "pil") -> None:
        if not 0 < min_area <= 1:
            raise ValueError(f"min_area must be in (0, 1], got {min_area}")
        self.size, self.min_area, self.backend = _hw(size), min_area, backend

    def box(self, H: int, W: int, rng: np.random.Generator) -> tuple:
        """``(y, x, h, w)`` of one draw for frames of ``H x W``."""
        area = H * W * (self.min_area + (1 - self.min_area) * rng.random())
        ratio = math.exp(math.log(3 / 4) + (math.log(4 / 3) - math.log(3 / 4)) * rng.random())
        w = min(W, max(1, int(round(math.sqrt(area * ratio)))))
        h = min(H, max(1, int(round(math.sqrt(area / ratio)))))
        return int(rng.integers(0, H - h + 1)), int(rng.integers(0, W - w + 1)), h, w

    def __call__(self, frames: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        H, W = check_frames(frames).shape[1:3]
        return resize_frames(_crop(frames, *self.box(H, W, rng)), self.size, self.backend)


class GroupRandomHorizontalFlip:
    """Mirror the whole clip with probability ``p`` (:func:`mirror`: flow x is inverted).
    ``enabled=False`` turns it off (direction-sensitive labels such as "moving something from
    left to right")."""

    def __init__(self, p: float = 0.5, enabled: bool = True) -> None:
        self.p, self.enabled = p, enabled

    def __call__(self, frames: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        check_frames(frames)
        if self.enabled and rng.random() < self.p:
            return mirror(frames)
        return frames


class GroupViews:
    """The ``crops`` test views of ``size`` (:func:`~tsm_apps.data.crops.view_offsets` of
    ``style``) -> ``(crops*N, h, w, C)``, the ``N`` frames of a view contiguous."""

    def __init__(self, size: Size, crops: int = 1, style: str = "official") -> None:
        self.size, self.crops, self.style = _hw(size), crops, style

    def offsets(self, H: int, W: int) -> list:
        return view_offsets(self.style, self.crops, H, W, *self.size)

    def __call__(self, frames: np.ndarray, rng=None) -> np.ndarray:
        H, W = check_frames(frames).shape[1:3]
        h, w = self.size
        views = [_crop(frames, y, x, h, w) for y, x, _ in self.offsets(H, W)]
        views = [mirror(v) if f else v for v, (_, _, f) in zip(views, self.offsets(H, W))]
        return np.concatenate(views)


class ToTensor:
    """uint8 ``(N, H, W, C)`` -> float32 tensor ``(N, C, H, W)``, divided by 255 when ``div``."""

    def __init__(self, div: bool = True) -> None:
        self.div = div

    def __call__(self, frames: np.ndarray, rng=None) -> torch.Tensor:
        x = torch.from_numpy(np.ascontiguousarray(check_frames(frames))).permute(0, 3, 1, 2)
        x = x.float()
        return x.div_(255.0) if self.div else x


class ToUint8Tensor:
    """uint8 ``(N, H, W, C)`` -> uint8 tensor ``(N, C, H, W)``: the pixels left for
    :func:`~tsm_apps.data.normalization.normalize_uint8` (e.g. on the device, after the copy)."""

    def __call__(self, frames: np.ndarray, rng=None) -> torch.Tensor:
        return torch.from_numpy(np.ascontiguousarray(check_frames(frames))).permute(0, 3, 1, 2)


class Normalize:
    """``(x - mean) / std`` on a float tensor ``(..., C, H, W)``
    (:func:`tsm_apps.data.normalization.normalize`)."""

    def __init__(self, mean: Stat = IMAGENET_MEAN, std: Stat = IMAGENET_STD) -> None:
        self.mean, self.std = mean, std

    def __call__(self, x: torch.Tensor, rng=None) -> torch.Tensor:
        return normalize(x, self.mean, self.std)


def train_transform(
    size: int = 224,
    crop: str = "multiscale",
    flip: bool = True,
    min_area: float = 0.5,
    scales: Sequence[float] = MULTI_SCALES,
    modality: str = "rgb",
    backend: str = "pil",
    normalize: bool = True,
) -> Compose:
    """Training augmentation: ``crop`` = ``"multiscale"`` (the official TSN/TSM crop) or
    ``"area"`` (:class:`GroupRandomResizedCrop`), optional mirror, tensor, normalise; without
    ``normalize`` the clip stays uint8 (:class:`ToUint8Tensor`), normalised later."""
    if crop not in TRAIN_CROPS:
        raise ValueError(f"crop must be one of {TRAIN_CROPS}, got {crop!r}")
    first = (
        GroupMultiScaleCrop(size, scales, backend=backend)
        if crop == "multiscale"
        else GroupRandomResizedCrop(size, min_area, backend)
    )
    last = [ToTensor(), Normalize(*modality_stats(modality))] if normalize else [ToUint8Tensor()]
    return Compose([first, GroupRandomHorizontalFlip(enabled=flip), *last])
