"""Group transforms: the same crop box, scale and flip for every frame of a clip.

A transform is a callable ``(frames, rng) -> frames`` on uint8 numpy ``(T, H, W, 3)`` with an
explicit ``numpy.random.Generator`` (one draw per clip, never per frame). Multi-crop transforms
return ``(K*T, h, w, 3)``, the ``T`` frames of each crop contiguous. :class:`ToTensor` turns
frames into float ``(T, 3, H, W)`` in ``[0, 1]``; :class:`Normalize` then works on that tensor.
Sizes are ints (square) or ``(height, width)``. Geometry follows the official TSM
``ops/transforms.py`` (multi-scale crop with the 13 fixed offsets, scales 1, .875, .75, .66).
"""
from __future__ import annotations

from typing import Optional, Sequence, Union

import numpy as np
import torch
from torch.nn import functional as F

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
MULTI_SCALES = (1.0, 0.875, 0.75, 0.66)
Size = Union[int, Sequence[int]]

__all__ = ["Compose", "GroupScale", "GroupCenterCrop", "GroupRandomCrop", "GroupMultiScaleCrop",
           "GroupRandomHorizontalFlip", "GroupThreeCrop", "GroupTenCrop", "ToTensor",
           "Normalize", "fixed_offsets", "resize_frames", "train_transform", "eval_transform",
           "IMAGENET_MEAN", "IMAGENET_STD", "MULTI_SCALES"]


def _hw(size: Size) -> tuple:
    if isinstance(size, (int, np.integer)):
        return int(size), int(size)
    h, w = size
    return int(h), int(w)


def _check_frames(frames: np.ndarray) -> np.ndarray:
    if not isinstance(frames, np.ndarray) or frames.dtype != np.uint8 or frames.ndim != 4 \
            or frames.shape[-1] != 3:
        got = f"{frames.dtype} {frames.shape}" if isinstance(frames, np.ndarray) else type(frames)
        raise ValueError(f"expected uint8 frames (T, H, W, 3), got {got}")
    return frames


def _crop(frames: np.ndarray, y: int, x: int, h: int, w: int) -> np.ndarray:
    H, W = frames.shape[1:3]
    if h > H or w > W or y < 0 or x < 0 or y + h > H or x + w > W:
        raise ValueError(f"crop {h}x{w} at (y={y}, x={x}) does not fit frames of {H}x{W}")
    return frames[:, y:y + h, x:x + w]


def resize_frames(frames: np.ndarray, size: tuple) -> np.ndarray:
    """Bilinear (antialiased) resize of uint8 ``(T, H, W, 3)`` to ``size = (h, w)``."""
    _check_frames(frames)
    h, w = size
    if frames.shape[1:3] == (h, w):
        return frames
    x = torch.from_numpy(np.ascontiguousarray(frames)).permute(0, 3, 1, 2).float()
    x = F.interpolate(x, size=(h, w), mode="bilinear", align_corners=False, antialias=True)
    return x.round_().clamp_(0, 255).to(torch.uint8).permute(0, 2, 3, 1).contiguous().numpy()


class Compose:
    """Apply transforms in order, passing the same ``rng`` to each."""

    def __init__(self, transforms: Sequence) -> None:
        self.transforms = list(transforms)

    def __call__(self, frames, rng: Optional[np.random.Generator] = None):
        for t in self.transforms:
            frames = t(frames, rng)
        return frames


class GroupScale:
    """Resize so the shorter side is ``size`` (int; longer side ``int(size * long / short)``,
    as torchvision) or to exactly ``(h, w)``."""

    def __init__(self, size: Size) -> None:
        self.size = size

    def __call__(self, frames: np.ndarray, rng=None) -> np.ndarray:
        H, W = _check_frames(frames).shape[1:3]
        if isinstance(self.size, (int, np.integer)):
            s = int(self.size)
            out = (s, int(s * W / H)) if H <= W else (int(s * H / W), s)
        else:
            out = _hw(self.size)
        return resize_frames(frames, out)


class GroupCenterCrop:
    """The central ``size`` crop (offsets ``round((H - h) / 2)``, ``round((W - w) / 2)``)."""

    def __init__(self, size: Size) -> None:
        self.size = _hw(size)

    def __call__(self, frames: np.ndarray, rng=None) -> np.ndarray:
        H, W = _check_frames(frames).shape[1:3]
        h, w = self.size
        return _crop(frames, int(round((H - h) / 2.0)), int(round((W - w) / 2.0)), h, w)


class GroupRandomCrop:
    """A ``size`` crop at a uniformly random position (one position for the whole clip)."""

    def __init__(self, size: Size) -> None:
        self.size = _hw(size)

    def __call__(self, frames: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        H, W = _check_frames(frames).shape[1:3]
        h, w = self.size
        if h > H or w > W:
            raise ValueError(f"random crop {h}x{w} does not fit frames of {H}x{W}")
        y, x = int(rng.integers(0, H - h + 1)), int(rng.integers(0, W - w + 1))
        return _crop(frames, y, x, h, w)


def fixed_offsets(H: int, W: int, h: int, w: int, more: bool = True) -> list:
    """The official fixed crop positions ``(y, x)``: 4 corners and the centre, plus (``more``)
    4 edge centres and 4 quarter points -- 13 in all. Steps are ``(H - h) // 4``, ``(W - w) // 4``."""
    hs, ws = (H - h) // 4, (W - w) // 4
    grid = [(0, 0), (0, 4), (4, 0), (4, 4), (2, 2)]
    if more:
        grid += [(2, 0), (2, 4), (4, 2), (0, 2), (1, 1), (1, 3), (3, 1), (3, 3)]
    return [(gy * hs, gx * ws) for gy, gx in grid]


class GroupMultiScaleCrop:
    """TSN/TSM multi-scale crop: a crop side ``int(min(H, W) * s)`` for height and for width from
    ``scales`` (sides within 3 px of the output snap to it), the two scale indices at most
    ``max_distort`` apart, placed at one of the fixed offsets (or anywhere when not
    ``fix_crop``), then resized to ``size``."""

    def __init__(self, size: Size, scales: Sequence[float] = MULTI_SCALES, max_distort: int = 1,
                 fix_crop: bool = True, more_fix_crop: bool = True) -> None:
        self.size = _hw(size)
        self.scales = tuple(scales)
        self.max_distort, self.fix_crop, self.more_fix_crop = max_distort, fix_crop, more_fix_crop

    def crop_pairs(self, H: int, W: int) -> list:
        """Candidate ``(crop_h, crop_w)`` pairs for frames of ``H x W``."""
        sides = [int(min(H, W) * s) for s in self.scales]
        ch = [self.size[0] if abs(s - self.size[0]) < 3 else s for s in sides]
        cw = [self.size[1] if abs(s - self.size[1]) < 3 else s for s in sides]
        return [(h, w) for i, h in enumerate(ch) for j, w in enumerate(cw)
                if abs(i - j) <= self.max_distort]

    def __call__(self, frames: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        H, W = _check_frames(frames).shape[1:3]
        pairs = self.crop_pairs(H, W)
        h, w = pairs[int(rng.integers(len(pairs)))]
        if self.fix_crop:
            offs = fixed_offsets(H, W, h, w, self.more_fix_crop)
            y, x = offs[int(rng.integers(len(offs)))]
        else:
            y, x = int(rng.integers(0, H - h + 1)), int(rng.integers(0, W - w + 1))
        return resize_frames(_crop(frames, y, x, h, w), self.size)


class GroupRandomHorizontalFlip:
    """Flip the whole clip left-right with probability ``p``. ``enabled=False`` turns it off
    (for direction-sensitive labels such as "moving something from left to right")."""

    def __init__(self, p: float = 0.5, enabled: bool = True) -> None:
        self.p, self.enabled = p, enabled

    def __call__(self, frames: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        _check_frames(frames)
        if self.enabled and rng.random() < self.p:
            return np.ascontiguousarray(frames[:, :, ::-1])
        return frames


class GroupThreeCrop:
    """Three ``size`` crops along the longer side (start, centre, end; centred across the other
    side) -> ``(3*T, h, w, 3)``. Test-time augmentation."""

    def __init__(self, size: Size) -> None:
        self.size = _hw(size)

    def __call__(self, frames: np.ndarray, rng=None) -> np.ndarray:
        H, W = _check_frames(frames).shape[1:3]
        h, w = self.size
        if W - w >= H - h:
            y = (H - h) // 2
            boxes = [(y, 0), (y, (W - w) // 2), (y, W - w)]
        else:
            x = (W - w) // 2
            boxes = [(0, x), ((H - h) // 2, x), (H - h, x)]
        return np.concatenate([_crop(frames, y, x, h, w) for y, x in boxes])


class GroupTenCrop:
    """Four corners and the centre, then the same five flipped -> ``(10*T, h, w, 3)``."""

    def __init__(self, size: Size) -> None:
        self.size = _hw(size)

    def __call__(self, frames: np.ndarray, rng=None) -> np.ndarray:
        H, W = _check_frames(frames).shape[1:3]
        h, w = self.size
        crops = [_crop(frames, y, x, h, w) for y, x in fixed_offsets(H, W, h, w, more=False)]
        crops += [c[:, :, ::-1] for c in crops]
        return np.concatenate(crops)


class ToTensor:
    """uint8 ``(T, H, W, 3)`` -> float32 tensor ``(T, 3, H, W)``, divided by 255 when ``div``."""

    def __init__(self, div: bool = True) -> None:
        self.div = div

    def __call__(self, frames: np.ndarray, rng=None) -> torch.Tensor:
        x = torch.from_numpy(np.ascontiguousarray(_check_frames(frames))).permute(0, 3, 1, 2)
        x = x.float()
        return x.div_(255.0) if self.div else x


class Normalize:
    """``(x - mean) / std`` per channel on a float tensor ``(..., 3, H, W)``."""

    def __init__(self, mean: Sequence[float] = IMAGENET_MEAN,
                 std: Sequence[float] = IMAGENET_STD) -> None:
        self.mean, self.std = tuple(mean), tuple(std)

    def __call__(self, x: torch.Tensor, rng=None) -> torch.Tensor:
        if not torch.is_tensor(x) or x.dim() < 3 or x.shape[-3] != 3:
            raise ValueError(f"Normalize expects a float tensor (..., 3, H, W), got "
                             f"{tuple(x.shape) if torch.is_tensor(x) else type(x)}")
        m = x.new_tensor(self.mean).view(3, 1, 1)
        s = x.new_tensor(self.std).view(3, 1, 1)
        return (x - m) / s


def train_transform(size: int = 224, flip: bool = True, scales: Sequence[float] = MULTI_SCALES,
                    mean: Sequence[float] = IMAGENET_MEAN,
                    std: Sequence[float] = IMAGENET_STD) -> Compose:
    """The official training augmentation: multi-scale crop, optional flip, tensor, normalise."""
    return Compose([GroupMultiScaleCrop(size, scales), GroupRandomHorizontalFlip(enabled=flip),
                    ToTensor(), Normalize(mean, std)])


def eval_transform(size: int = 224, scale_size: Optional[int] = None, crops: int = 1,
                   mean: Sequence[float] = IMAGENET_MEAN,
                   std: Sequence[float] = IMAGENET_STD) -> Compose:
    """Evaluation: shorter side to ``scale_size`` (default ``size * 256 // 224``), then a centre
    crop (``crops=1``), three crops at full resolution (``crops=3``, shorter side ``size``) or ten
    crops (``crops=10``); tensor; normalise."""
    if crops not in (1, 3, 10):
        raise ValueError(f"crops must be 1, 3 or 10, got {crops}")
    scale = size if crops == 3 else (scale_size or size * 256 // 224)
    crop = {1: GroupCenterCrop, 3: GroupThreeCrop, 10: GroupTenCrop}[crops](size)
    return Compose([GroupScale(scale), crop, ToTensor(), Normalize(mean, std)])
