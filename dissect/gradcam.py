"""Grad-CAM family for clip recognizers, through the ``pytorch_grad_cam`` library (grad-cam).

The library hooks ``target_layers`` (default: the recognizer's trunk, whose output is the last
conv features ``(N*T', C, h, w)``, frames of a clip contiguous) and computes per-channel weights
from activations and gradients reduced over the spatial axes of each sample. The choice of
sample makes the weighting explicit:

* ``weighting='frame'``: the activations keep the ``(N*T', C, h, w)`` layout, so every frame
  gets its own channel weights (Grad-CAM: ``w[n,t,c] = mean_{h,w} dy/dA[n,t,c]``);
* ``weighting='clip'``: a ``reshape_transform`` lays each clip's frames out one above the other,
  ``(N, C, T'*h, w)``, so one weight vector per clip is reduced over ``(t, h, w)``
  (``w[n,c] = mean_{t,h,w} dy/dA[n,t,c]``) and shared by all its frames.

Our thin code around the library: we call its ``get_cam_image`` (weights x activations summed
over channels) directly and apply the ReLU, instead of its ``__call__``, because ``__call__``
min-max normalises every map; the maps returned here are raw (rectified, not normalised).
Hooks are released on exit, also on error.
"""

from __future__ import annotations

import importlib
from typing import Optional

import torch
from torch import Tensor, nn

from .cam import ClassIndex, ClipMaps, resolve_classes, upsample_maps

LIBRARY_METHODS = {
    "gradcam": "GradCAM",
    "gradcam++": "GradCAMPlusPlus",
    "xgradcam": "XGradCAM",
    "hirescam": "HiResCAM",
    "layercam": "LayerCAM",
    "eigencam": "EigenCAM",
}
WEIGHTINGS = ("frame", "clip")
DEFAULT_WEIGHTING = "clip"


def frames_to_clip_layout(x: Tensor, batch: int) -> Tensor:
    """``(N*T, C, h, w)`` -> ``(N, C, T*h, w)``: each clip's frames stacked along the height."""
    if x.dim() != 4 or x.shape[0] % batch:
        raise ValueError(f"expected (N*T, C, h, w) with N={batch}, got {tuple(x.shape)}")
    n, t = batch, x.shape[0] // batch
    c, h, w = x.shape[1:]
    return x.reshape(n, t, c, h, w).permute(0, 2, 1, 3, 4).reshape(n, c, t * h, w)


def clip_layout_to_frames(cam: Tensor, num_steps: int) -> Tensor:
    """``(N, T*h, w)`` -> ``(N, T, h, w)`` (inverse of the stacking, for single-channel maps)."""
    n, th, w = cam.shape
    if th % num_steps:
        raise ValueError(f"cannot split height {th} into {num_steps} frames")
    return cam.reshape(n, num_steps, th // num_steps, w)


def library_cam_class(method: str) -> type:
    """The ``pytorch_grad_cam`` class implementing ``method`` (see :data:`LIBRARY_METHODS`)."""
    if method not in LIBRARY_METHODS:
        raise ValueError(
            f"unknown Grad-CAM method {method!r}; expected one of {sorted(LIBRARY_METHODS)}"
        )
    lib = importlib.import_module("pytorch_grad_cam")
    return getattr(lib, LIBRARY_METHODS[method])


def _default_layer(model: nn.Module) -> nn.Module:
    layer = getattr(model, "backbone", None)
    if not isinstance(layer, nn.Module):
        raise TypeError(f"{type(model).__name__} has no .backbone; pass target_layer")
    return layer


def _raw_cam(
    cam, clips: Tensor, layer: nn.Module, class_idx: ClassIndex, model: nn.Module
) -> tuple:
    """Forward (+ backward) through the library's hooks; returns (cam array, logits, classes)."""
    from pytorch_grad_cam.utils.model_targets import ClassifierOutputTarget

    with torch.enable_grad():
        outputs = cam.activations_and_grads(clips)
        if outputs.dim() != 2:
            raise ValueError(f"model must return logits (N, K), got {tuple(outputs.shape)}")
        classes = resolve_classes(outputs.detach(), class_idx)
        targets = [ClassifierOutputTarget(int(k)) for k in classes]
        grads = None
        if cam.uses_gradients:
            model.zero_grad(set_to_none=True)
            sum(t(o) for t, o in zip(targets, outputs)).backward()
            grads = cam.activations_and_grads.gradients[0].cpu().numpy()
    acts = cam.activations_and_grads.activations[0].cpu().numpy()
    raw = cam.get_cam_image(clips, layer, targets, acts, grads, False)
    return torch.as_tensor(raw).float().clamp_min(0), outputs.detach(), classes


def compute_gradcam(
    model: nn.Module,
    clips: Tensor,
    method: str = "gradcam",
    weighting: str = DEFAULT_WEIGHTING,
    class_idx: ClassIndex = None,
    target_layer: Optional[nn.Module] = None,
    upsample: bool = True,
) -> ClipMaps:
    """Grad-CAM-family maps of ``model`` for clips ``(N, T, 3, H, W)``.

    ``target_layer`` must output ``(N*T', C, h, w)`` (default ``model.backbone``).
    Returns :class:`~dissect.cam.ClipMaps` with raw maps ``(N, T, H, W)``.
    """
    if weighting not in WEIGHTINGS:
        raise ValueError(f"weighting must be one of {WEIGHTINGS}, got {weighting!r}")
    if clips.dim() != 5:
        raise ValueError(f"clips must be (N, T, 3, H, W), got {tuple(clips.shape)}")
    if model.training:
        raise ValueError("compute maps with the model in eval mode (model.eval())")
    cls = library_cam_class(method)
    layer = target_layer if target_layer is not None else _default_layer(model)
    n = clips.shape[0]
    seen: dict = {}

    def stack_frames(x: Tensor) -> Tensor:
        seen["rows"] = x.shape[0]
        return frames_to_clip_layout(x, n)

    transform = stack_frames if weighting == "clip" else None
    cam = cls(model=model, target_layers=[layer], reshape_transform=transform)
    try:
        raw, logits, classes = _raw_cam(cam, clips, layer, class_idx, model)
    finally:
        cam.activations_and_grads.release()
        model.zero_grad(set_to_none=True)
    if weighting == "frame":
        low = raw.reshape(n, raw.shape[0] // n, *raw.shape[1:])
    else:
        low = clip_layout_to_frames(raw, seen["rows"] // n)
    low = low.to(clips.device)
    maps = upsample_maps(low, clips.shape[-2:], clips.shape[1]) if upsample else low
    return ClipMaps(maps=maps, lowres=low, logits=logits, classes=classes)
