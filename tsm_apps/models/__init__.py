"""Models: the temporal shift (:mod:`.shift`), ResNet/MobileNetV2 backbones with TSM
(:mod:`.backbone`), recognizers (:mod:`.recognizer`), the online (causal) recognizer
(:mod:`.online`), input modalities (:mod:`.modality`), non-local blocks and the I3D twin
(:mod:`.inflate`). The names below load on first use, so importing one light module (e.g.
:mod:`.modality`) does not import torchvision's model zoo."""
from __future__ import annotations

import importlib
from typing import Any

_API = {
    ".backbone": ("ARCHS", "Backbone", "BackboneConfig", "build_backbone", "set_num_segments"),
    ".online": ("OnlineRecognizer", "OnlineStep", "shift_modules", "streaming"),
    ".recognizer": ("Recognizer", "RecognizerConfig", "build_recognizer",
                    "recognizer_from_config"),
    ".temporal_pool": ("TemporalPool",),
    ".shift": ("TemporalShift", "online_shift_step", "temporal_shift"),
}
_WHERE = {name: module for module, names in _API.items() for name in names}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name], __name__), name)
    globals()[name] = value
    return value
