"""TSM Apps: the shared Temporal Shift Module backbone package.

Never imports mmdet/mmengine/mmcv (a test checks this in a subprocess).
"""
from .models.backbone import ARCHS, Backbone, BackboneConfig, build_backbone, set_num_segments
from .checkpoint.reading import load_checkpoint, save_checkpoint
from .models.online import OnlineRecognizer, OnlineStep, shift_modules, streaming
from .models.recognizer import Recognizer, RecognizerConfig, build_recognizer, recognizer_from_config
from .models.shift import TemporalPool, TemporalShift, online_shift_step, temporal_shift

__all__ = [
    "ARCHS", "Backbone", "BackboneConfig", "build_backbone", "set_num_segments",
    "load_checkpoint", "save_checkpoint",
    "OnlineRecognizer", "OnlineStep", "shift_modules", "streaming",
    "Recognizer", "RecognizerConfig", "build_recognizer", "recognizer_from_config",
    "TemporalPool", "TemporalShift", "online_shift_step", "temporal_shift",
]
