"""One entry point for every map method: the exact CAM and the Grad-CAM family."""

from __future__ import annotations

from typing import Optional

from torch import Tensor, nn

from .cam import ClassIndex, ClipMaps, compute_cam
from .gradcam import DEFAULT_WEIGHTING, LIBRARY_METHODS, compute_gradcam

METHODS = ("cam",) + tuple(LIBRARY_METHODS)


def compute_clip_maps(
    model: nn.Module,
    clips: Tensor,
    method: str = "cam",
    class_idx: ClassIndex = None,
    weighting: str = DEFAULT_WEIGHTING,
    target_layer: Optional[nn.Module] = None,
) -> ClipMaps:
    """Raw maps of ``model`` (eval mode) for clips ``(N, T, 3, H, W)`` or one clip ``(T, 3, H, W)``.

    ``method``: ``'cam'`` (exact CAM) or a Grad-CAM-family name (:data:`METHODS`);
    ``weighting`` (``'frame'``/``'clip'``) and ``target_layer`` apply to the Grad-CAM family.
    A single clip gives maps ``(1, T, H, W)``.
    """
    if clips.dim() == 4:
        clips = clips[None]
    if method == "cam":
        if target_layer is not None:
            raise ValueError(
                "the exact CAM uses the last conv features; target_layer is for the Grad-CAM family"
            )
        return compute_cam(model, clips, class_idx)
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; expected one of {METHODS}")
    return compute_gradcam(model, clips, method, weighting, class_idx, target_layer)
