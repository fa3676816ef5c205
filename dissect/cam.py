"""Exact class activation maps (CAM) of a clip recognizer, as in the TSM paper (section 8).

The classifier ``fc`` is applied as a 1x1x1 convolution to the last conv features
``(N, T', C, h, w)`` (global pooling dropped), giving ``(N, K, T', h, w)`` maps. Because the
recognizer's head is average pooling followed by a linear layer and an average over time, the
mean of class ``k``'s map over ``(t, h, w)`` plus ``fc.bias[k]`` equals the clip logit ``k``.

Maps are raw: no ReLU, no normalisation (normalisation is for display only, see
:mod:`dissect.overlay`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence, Union

import torch
import torch.nn.functional as F
from torch import Tensor, nn

ClassIndex = Union[None, int, Sequence[int], Tensor]


@dataclass
class ClipMaps:
    """Result of a map computation for a batch of clips.

    ``maps``: ``(N, T, H, W)`` raw maps at input resolution (``T`` input frames; with temporal
    pooling each feature step is repeated over the frames it covers). ``lowres``: the maps at
    feature resolution ``(N, T', h, w)``. ``logits``: ``(N, K)``. ``classes``: ``(N,)`` the
    class each map explains.
    """

    maps: Tensor
    lowres: Tensor
    logits: Tensor
    classes: Tensor


def class_activation_maps(feats: Tensor, fc: nn.Linear) -> Tensor:
    """All-class CAMs: ``(N, T', C, h, w)`` features and ``fc`` (K x C) -> ``(N, K, T', h, w)``.

    The bias is not added (it is constant over positions).
    """
    if feats.dim() != 5:
        raise ValueError(f"features must be (N, T', C, h, w), got {tuple(feats.shape)}")
    if feats.shape[2] != fc.in_features:
        raise ValueError(
            f"features have C={feats.shape[2]} channels but fc expects "
            f"{fc.in_features} (features shape {tuple(feats.shape)})"
        )
    return torch.einsum("ntchw,kc->nkthw", feats, fc.weight)


def class_map(feats: Tensor, fc: nn.Linear, classes: Tensor) -> Tensor:
    """CAM of one class per clip: ``(N, T', C, h, w)``, classes ``(N,)`` -> ``(N, T', h, w)``.

    Costs one dot product per position (not ``K``), so it is nearly free next to a forward pass.
    """
    if feats.dim() != 5:
        raise ValueError(f"features must be (N, T', C, h, w), got {tuple(feats.shape)}")
    w = fc.weight[classes]  # (N, C)
    return torch.einsum("ntchw,nc->nthw", feats, w)


def resolve_classes(logits: Tensor, class_idx: ClassIndex = None) -> Tensor:
    """The class per clip: the predicted one (``None``), one index for all, or one per clip."""
    n, k = logits.shape
    if class_idx is None:
        return logits.argmax(dim=1)
    idx = torch.as_tensor(class_idx, dtype=torch.long, device=logits.device).reshape(-1)
    if idx.numel() == 1:
        idx = idx.expand(n)
    if idx.numel() != n:
        raise ValueError(f"got {idx.numel()} class indices for {n} clips")
    bad = idx[(idx < 0) | (idx >= k)]
    if bad.numel():
        raise ValueError(
            f"class index {int(bad[0])} out of range: the model has {k} classes (valid 0..{k - 1})"
        )
    return idx.clone()


def upsample_maps(maps: Tensor, size: tuple, num_frames: Optional[int] = None) -> Tensor:
    """Bilinearly upsample ``(N, T', h, w)`` maps to ``(N, T, H, W)``.

    ``size`` is ``(H, W)``. When ``num_frames`` ``T`` is a multiple of ``T'`` (temporal pooling)
    each map is repeated over the ``T // T'`` frames it covers.
    """
    if maps.dim() != 4:
        raise ValueError(f"maps must be (N, T', h, w), got {tuple(maps.shape)}")
    n, tp, h, w = maps.shape
    up = F.interpolate(
        maps.reshape(n * tp, 1, h, w), size=tuple(size), mode="bilinear", align_corners=False
    ).reshape(n, tp, *size)
    if num_frames is None or num_frames == tp:
        return up
    if num_frames % tp:
        raise ValueError(f"cannot spread {tp} map steps over {num_frames} frames")
    return up.repeat_interleave(num_frames // tp, dim=1)


def _eval_model(model: nn.Module) -> None:
    if model.training:
        raise ValueError(
            "compute maps with the model in eval mode (model.eval()): dropout and "
            "batch-norm statistics change the maps otherwise"
        )


def compute_cam(
    model: nn.Module, clips: Tensor, class_idx: ClassIndex = None, upsample: bool = True
) -> ClipMaps:
    """Exact CAM of ``model`` (a :class:`~tsm_apps.models.recognizer.Recognizer`) for ``(N, T, 3, H, W)``.

    One forward pass of the trunk; logits come from the same features, so the cost is a plain
    forward pass plus one channel dot product per position. ``class_idx``: ``None`` for the
    predicted class, an int for all clips, or one index per clip.
    """
    _eval_model(model)
    if clips.dim() != 5:
        raise ValueError(f"clips must be (N, T, 3, H, W), got {tuple(clips.shape)}")
    with torch.no_grad():
        feats = model.features(clips)
        logits = model.head(feats)
        classes = resolve_classes(logits, class_idx)
        low = class_map(feats, model.fc, classes)
    maps = upsample_maps(low, clips.shape[-2:], clips.shape[1]) if upsample else low
    return ClipMaps(maps=maps, lowres=low, logits=logits, classes=classes)
