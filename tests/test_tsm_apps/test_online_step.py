"""The explicit-buffer online step takes its dry run on the model's own device and dtype (on a
CUDA machine a CPU dry run failed, so the app's live recognizer never started there)."""

from __future__ import annotations

import torch

from tsm_apps import OnlineStep, build_recognizer


def test_buffer_shapes_in_the_models_dtype():
    torch.manual_seed(0)
    model = build_recognizer("resnet18", 3, num_segments=2, shift="online", width=0.125).eval()
    ref = OnlineStep(model).buffer_shapes((1, 3, 32, 32))
    double = OnlineStep(model.double())
    assert double.buffer_shapes((1, 3, 32, 32)) == ref  # a float32 dry run refused float64 weights
    buffers = [torch.zeros(s, dtype=torch.float64) for s in ref]
    logits, *new = double(torch.rand(1, 3, 32, 32, dtype=torch.float64), *buffers)
    assert logits.dtype == torch.float64 and [tuple(b.shape) for b in new] == ref
