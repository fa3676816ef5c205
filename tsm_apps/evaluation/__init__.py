"""tsm_apps.evaluation: what ``tsm test`` does -- each checkpoint's test protocol, multi-clip /
multi-crop scoring, metrics, two-stream fusion and online (early) recognition. Training imports
it (validation uses the same protocol); it never imports training."""

from __future__ import annotations

from ..lazy import lazy_exports

_LAZY, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        ".recognition": ("Checkpoint", "Prediction", "open_checkpoint", "predict"),
        ".evaluate": ("evaluate",),
        ".scoring": ("fuse_views", "top_k", "view_logits"),
    },
)
__all__ = list(_LAZY)
