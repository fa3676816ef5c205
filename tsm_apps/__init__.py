"""TSM Apps: the shared Temporal Shift Module backbone package.

The public API below is loaded on first use (PEP 562), so ``import tsm_apps`` — and every ``tsm``
command's early input checks — do not pay for torchvision's model zoo until a model is needed.
Never imports mmdet/mmengine/mmcv, nor detection/dissect/ui (tests check both in a subprocess).
"""
from __future__ import annotations

from .lazy import lazy_exports

_API = {
    ".models.backbone": ("ARCHS", "Backbone", "BackboneConfig", "build_backbone",
                         "set_num_segments"),
    ".checkpoint.reading": ("load_checkpoint", "save_checkpoint"),
    ".models.online": ("OnlineRecognizer", "OnlineStep", "shift_modules", "streaming"),
    ".models.recognizer": ("Recognizer", "RecognizerConfig", "build_recognizer",
                           "recognizer_from_config"),
    ".models.temporal_pool": ("TemporalPool",),
    ".models.shift": ("TemporalShift", "online_shift_step", "temporal_shift"),
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _API)
