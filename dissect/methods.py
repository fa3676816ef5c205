"""One entry point for every map method: the exact CAM, the Grad-CAM family, and methods of
other packages.

A method of your own is a function ``(model, clips (N, T, 3, H, W), class_idx) -> ClipMaps``.
Give it to :func:`compute_clip_maps` as ``method=``, or register it under the entry-point group
``tsm.cam`` (:data:`GROUP`) of your package, so ``tsm dissect run --method NAME`` and the app's
method list find it by name (docs/guide/extending.md).
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points
from typing import Callable, Optional, Union

from torch import Tensor, nn

from .cam import ClassIndex, ClipMaps, compute_cam
from .gradcam import DEFAULT_WEIGHTING, LIBRARY_METHODS, compute_gradcam

GROUP = "tsm.cam"
"""Entry-point group of map methods from other packages: ``name = "package.module:function"``."""

BUILT_IN = ("cam",) + tuple(LIBRARY_METHODS)

MapMethod = Callable[[nn.Module, Tensor, ClassIndex], ClipMaps]


def installed_methods() -> dict[str, EntryPoint]:
    """The map methods other installed packages register under :data:`GROUP` (built-in names
    cannot be taken)."""
    return {ep.name: ep for ep in entry_points(group=GROUP) if ep.name not in BUILT_IN}


METHODS = BUILT_IN + tuple(sorted(installed_methods()))
"""Every map method name: the built-in ones, then the installed ones (at import)."""


def compute_clip_maps(
    model: nn.Module,
    clips: Tensor,
    method: Union[str, MapMethod] = "cam",
    class_idx: ClassIndex = None,
    weighting: str = DEFAULT_WEIGHTING,
    target_layer: Optional[nn.Module] = None,
) -> ClipMaps:
    """Raw maps of ``model`` (eval mode) for clips ``(N, T, 3, H, W)`` or one clip ``(T, 3, H, W)``.

    ``method``: ``'cam'`` (exact CAM), a Grad-CAM-family name, the name of an installed method
    (:data:`METHODS`), or a :data:`MapMethod` function; ``weighting`` (``'frame'``/``'clip'``)
    and ``target_layer`` apply to the Grad-CAM family. A single clip gives maps ``(1, T, H, W)``.
    """
    if clips.dim() == 4:
        clips = clips[None]
    if method == "cam":
        if target_layer is not None:
            raise ValueError(
                "the exact CAM uses the last conv features; target_layer is for the Grad-CAM family"
            )
        return compute_cam(model, clips, class_idx)
    if isinstance(method, str) and method in LIBRARY_METHODS:
        return compute_gradcam(model, clips, method, weighting, class_idx, target_layer)
    return _checked(method, _resolve(method)(model, clips, class_idx), clips)


def _resolve(method: Union[str, MapMethod]) -> MapMethod:
    if callable(method):
        return method
    installed = installed_methods()
    if method not in installed:
        raise ValueError(f"unknown method {method!r}; expected one of {METHODS + tuple(installed)}")
    return installed[method].load()


def _checked(method: Union[str, MapMethod], out: ClipMaps, clips: Tensor) -> ClipMaps:
    """``out`` when it is a :class:`ClipMaps` with maps ``(N, T, H, W)`` of ``clips``; a
    one-line error naming the method and what it returned otherwise."""
    name = method if isinstance(method, str) else getattr(method, "__name__", repr(method))
    n, t, _, h, w = clips.shape
    if not isinstance(out, ClipMaps):
        raise TypeError(f"map method {name} returned {type(out).__name__}, expected ClipMaps")
    if tuple(out.maps.shape) != (n, t, h, w) or tuple(out.classes.shape) != (n,):
        raise ValueError(
            f"map method {name} returned maps {tuple(out.maps.shape)} and classes "
            f"{tuple(out.classes.shape)} for clips {tuple(clips.shape)}; expected maps "
            f"{(n, t, h, w)} and classes {(n,)}"
        )
    return out
