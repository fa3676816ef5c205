"""Online TSM on live video: many streams of any length through one batched model.

* :mod:`.engine`: one batched online step for the streams of one model (``BatchedEngine``; the
  ``Stepper`` a model family provides; CUDA graphs per batch bucket on a GPU).
* :mod:`.stream`: a stream's state, newest-frame mailbox, counters and results.
* :mod:`.scheduler`: the thread that steps every stream of a model once per tick.
* :mod:`.recognition`: the online recognizer as a stepper; the running window of the official
  online demo.
* :mod:`.engine_file`: an online engine file (``tsm export --online --engine onnxruntime``) as
  a stepper, run by ONNX Runtime.
* :mod:`.sources`: files of any length, frame folders, network streams, cameras.
* :mod:`.policy`: which network addresses a server may be asked to open.
* :mod:`.output`: per-frame JSON lines, the rendered video, the timeline.
* :mod:`.cli`: ``tsm live``.
"""

from __future__ import annotations

from ..lazy import lazy_exports

_API = {
    ".engine": ("BatchedEngine", "Prepared", "Stepper"),
    ".recognition": ("RecognizerStepper", "Window", "top_k"),
    ".engine_file": ("EngineStepper",),
    ".scheduler": ("Scheduler",),
    ".stream": ("Frame", "LiveStream", "Result"),
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _API)
