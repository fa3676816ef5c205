"""Checkpoints: reading and writing ours (:mod:`.reading`), recognising the official TSM,
mmaction2 and other layouts (:mod:`.layouts`), and ONNX export (:mod:`.export`)."""
from .reading import load_checkpoint, save_checkpoint

__all__ = ["load_checkpoint", "save_checkpoint"]
