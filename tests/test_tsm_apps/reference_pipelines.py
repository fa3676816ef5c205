"""The reference test pipelines, re-typed from their code (not from ours), for the
equivalence tests, and a checkpoint whose scores move with its input.

* official TSM (``test_models.py`` + ``ops/dataset.py`` + ``ops/transforms.py``): test indices
  ``int(tick / 2.0 + tick * x)`` with ``tick = (num_frames - new_length + 1) / T`` (dense:
  ``linspace(0, max(1, 1 + F - 64) - 1, 10)`` starts, frame ``(i * 64 // T + s) % F``); each
  frame a PIL image through torchvision's ``Resize(scale_size)`` and ``CenterCrop(crop)``
  (``--test_crops 3``: ``GroupFullResSample``: x ``0, 4*ws, 2*ws``, y ``2*hs``, steps ``// 4``);
  ``ToTensor`` and ``Normalize`` with ImageNet's mean/std; logits averaged over the views.
* mmaction2 1.x (``loading.py`` ``SampleFrames._get_test_clips`` for ``clip_len == 1``,
  ``processing.py`` ``Resize``/``CenterCrop``): offsets ``base + avg / 2`` truncated,
  ``mmcv.rescale_size`` + ``mmcv.imresize`` (cv2 bilinear), ``left = (w - cw) // 2``; the data
  preprocessor's mean ``[123.675, 116.28, 103.53]`` / std ``[58.395, 57.12, 57.375]``;
  ``average_clips='prob'``.
"""

from __future__ import annotations

import numpy as np
import torch
import torchvision.transforms as T
from PIL import Image
from torch import nn

from tsm_apps.data.video import count_frames, read_video_frames

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
MM_MEAN, MM_STD = [123.675, 116.28, 103.53], [58.395, 57.12, 57.375]
VIDEOS = ("bikes.mp4", "bigbuckbunny.mp4", "carphone_pristine.mp4")  # 640x272, 1280x720, 176x144


def official_indices(num_frames: int, t: int, dense: bool = False) -> list:
    if dense:
        pos, stride = max(1, 1 + num_frames - 64), 64 // t
        starts = np.linspace(0, pos - 1, num=10, dtype=int)
        return [[(i * stride + int(s)) % num_frames for i in range(t)] for s in starts]
    tick = num_frames / float(t)
    return [[int(tick / 2.0 + tick * x) for x in range(t)]]


def official_views(
    path, t: int = 8, crop: int = 224, scale: int = 256, dense: bool = False
) -> tuple:
    """``(indices [clips][T], views (V, T, 3, S, S))`` as the official test script makes them."""
    n = count_frames(path)
    clips = official_indices(n, t, dense)
    views = []
    for idx in clips:
        imgs = [T.Resize(scale)(Image.fromarray(f)) for f in read_video_frames(path, idx)]
        if dense:  # GroupFullResSample(crop, scale, flip=False)
            w, h = imgs[0].size
            ws, hs = (w - crop) // 4, (h - crop) // 4
            boxes = [(0, 2 * hs), (4 * ws, 2 * hs), (2 * ws, 2 * hs)]
            crops = [[im.crop((x, y, x + crop, y + crop)) for im in imgs] for x, y in boxes]
        else:
            crops = [[T.CenterCrop(crop)(im) for im in imgs]]
        for group in crops:
            x = torch.stack([T.functional.to_tensor(im) for im in group])
            views.append(T.functional.normalize(x, MEAN, STD))
    return clips, torch.stack(views)


def mmaction2_views(path, t: int = 8, crop: int = 224, scale: int = 256) -> tuple:
    """``(indices [1][T], views (1, T, 3, S, S))`` as mmaction2's test pipeline makes them."""
    import mmcv

    n = count_frames(path)
    avg = n / float(t)
    offsets = np.arange(t) * avg + avg / 2.0
    idx = (np.mod(offsets, n)).astype(np.int32).tolist()
    frames = read_video_frames(path, idx)
    h, w = frames.shape[1:3]
    new_w, new_h = mmcv.rescale_size((w, h), (np.inf, scale))
    imgs = [mmcv.imresize(f, (new_w, new_h), interpolation="bilinear") for f in frames]
    left, top = (new_w - crop) // 2, (new_h - crop) // 2
    x = np.stack([im[top : top + crop, left : left + crop] for im in imgs]).astype(np.float32)
    x = (x - np.array(MM_MEAN, np.float32)) / np.array(MM_STD, np.float32)
    return [idx], torch.from_numpy(x).permute(0, 3, 1, 2)[None]


def responsive(model: nn.Module, views: list, spread: float = 3.0) -> nn.Module:
    """Make a random network's scores move with its input: BN statistics measured on real
    ``views`` (clips ``(1, T, 3, S, S)``), the classifier scaled to logits of std ``spread`` and
    centred over those clips (so each video gets its own top classes). Eval mode. The
    classifier is ``new_fc`` (the official ``TSN``) or ``fc`` (our ``Recognizer``)."""
    bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    for m in bns:
        m.momentum = None
        m.reset_running_stats()
    model.train()
    with torch.no_grad():
        for v in views:
            model(v)
        model.eval()
        logits = torch.stack([model(v)[0] for v in views])
        fc = model.new_fc if hasattr(model, "new_fc") else model.fc
        fc.weight.mul_(spread / float(logits.std(1).mean()))
        fc.bias.copy_((fc.bias - logits.mean(0)) * spread / float(logits.std(1).mean()))
    return model


def grey_levels(a: torch.Tensor, b: torch.Tensor) -> float:
    """Mean absolute difference of two normalised RGB inputs ``(..., 3, H, W)`` in 0-255 grey
    levels."""
    std = torch.tensor(STD).view(3, 1, 1)
    return float(((a - b).abs() * std * 255).mean())
