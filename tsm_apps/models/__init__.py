"""Models: the temporal shift, ResNet/MobileNetV2 backbones with TSM, recognizers, the online
(causal) recognizer, non-local blocks and the I3D-replace inflation."""
from .backbone import ARCHS, Backbone, BackboneConfig, build_backbone, set_num_segments
from .online import OnlineRecognizer, OnlineStep, shift_modules, streaming
from .recognizer import Recognizer, RecognizerConfig, build_recognizer, recognizer_from_config
from .shift import TemporalPool, TemporalShift, online_shift_step, temporal_shift

__all__ = [
    "ARCHS", "Backbone", "BackboneConfig", "build_backbone", "set_num_segments",
    "OnlineRecognizer", "OnlineStep", "shift_modules", "streaming",
    "Recognizer", "RecognizerConfig", "build_recognizer", "recognizer_from_config",
    "TemporalPool", "TemporalShift", "online_shift_step", "temporal_shift",
]
