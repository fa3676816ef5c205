"""EigenCAM-style attention maps for a detector backbone's frames (Muhammad & Yeasin 2020).

A detector has no single class score to take gradients of; EigenCAM projects each frame's
activations ``(C, h*w)`` on their first principal component instead. Our projection is centred
(as in the pytorch-grad-cam implementation) and, unlike it, sign-fixed: an SVD component's sign
is arbitrary, so we flip it to correlate positively with the channel-mean activation, then apply
a ReLU. Takes any ``nn.Module`` backbone mapping ``(T, 3, H, W)`` to a tensor or a tuple/list of
feature maps ``(T, C, h, w)`` (no detector library is imported here).
"""

from __future__ import annotations

from typing import Sequence, Union

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .overlay import normalize_for_display


def principal_projection(acts: Tensor) -> Tensor:
    """``(T, C, h, w)`` -> ``(T, h, w)``: per frame, the positions projected on the first
    principal component of the centred ``(h*w, C)`` activations, sign-fixed, rectified."""
    if acts.dim() != 4:
        raise ValueError(f"activations must be (T, C, h, w), got {tuple(acts.shape)}")
    t, c, h, w = acts.shape
    x = acts.float().reshape(t, c, h * w).transpose(1, 2)  # (T, hw, C)
    x = torch.nan_to_num(x) - x.mean(dim=1, keepdim=True)
    _, _, vh = torch.linalg.svd(x, full_matrices=False)
    proj = x @ vh[:, 0, :, None]  # (T, hw, 1)
    proj = proj[..., 0]
    ref = acts.float().reshape(t, c, h * w).mean(dim=1)
    ref = ref - ref.mean(dim=1, keepdim=True)
    sign = torch.where((proj * ref).sum(dim=1, keepdim=True) < 0, -1.0, 1.0)
    return (proj * sign).clamp_min(0).reshape(t, h, w)


def select_level(features: Union[Tensor, Sequence[Tensor]], level: int) -> Tensor:
    """Pick one feature map from a backbone output (tensor, or tuple/list of tensors)."""
    if isinstance(features, Tensor):
        return features
    if isinstance(features, (tuple, list)) and features:
        try:
            return features[level]
        except IndexError:
            raise ValueError(
                f"level {level} out of range: the backbone returned {len(features)} feature maps"
            ) from None
    raise TypeError(
        f"backbone must return a tensor or a tuple/list of tensors, got {type(features).__name__}"
    )


def detector_attention(
    backbone: nn.Module, frames: Tensor, level: int = -1, normalize: str = "frame"
) -> Tensor:
    """Attention maps ``(T, H, W)`` at frame resolution for frames ``(T, 3, H, W)``.

    All frames go through ``backbone`` in one batch (a TSM backbone shifts across them, so give
    it the frame count it was built for). ``normalize``: ``'frame'``, ``'clip'`` (to ``[0, 1]``
    for display) or ``'none'`` (raw projections).
    """
    if frames.dim() != 4 or frames.shape[1] != 3:
        raise ValueError(f"frames must be (T, 3, H, W), got {tuple(frames.shape)}")
    with torch.no_grad():
        acts = select_level(backbone(frames), level)
        if acts.dim() != 4 or acts.shape[0] != frames.shape[0]:
            raise ValueError(
                f"feature map must be (T={frames.shape[0]}, C, h, w), got {tuple(acts.shape)}"
            )
        low = principal_projection(acts)
        maps = F.interpolate(
            low[:, None], size=frames.shape[-2:], mode="bilinear", align_corners=False
        )[:, 0].cpu()
    if normalize == "none":
        return maps
    return torch.from_numpy(normalize_for_display(maps.numpy(), normalize)).float()
