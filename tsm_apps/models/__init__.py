"""Models: the temporal shift, its layer, placement and online state (:mod:`.shift`),
ResNet/MobileNetV2 trunks (:mod:`.trunk`) and backbones with TSM (:mod:`.backbone`), recognizers
(:mod:`.recognizer`), the online (causal) recognizer (:mod:`.online`), input modalities
(:mod:`.modality`), non-local blocks and the I3D twin (:mod:`.inflate`). The names below load on
first use, so importing one light module (e.g. :mod:`.modality`) does not import torchvision's
model zoo."""

from __future__ import annotations

from ..lazy import lazy_exports

_API = {
    ".backbone": ("ARCHS", "Backbone", "BackboneConfig", "build_backbone", "set_num_segments"),
    ".online": ("OnlineRecognizer", "OnlineStep", "online_modules", "shift_modules"),
    ".recognizer": ("Recognizer", "RecognizerConfig", "build_recognizer", "recognizer_from_config"),
    ".temporal_pool": ("TemporalPool",),
    ".shift": ("ShiftState", "TemporalShift", "online_shift_step", "stepping", "temporal_shift"),
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _API)
