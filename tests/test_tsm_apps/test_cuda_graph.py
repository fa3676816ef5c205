"""CUDA-graph replay (``tsm_apps.models.cuda_graph``) leaves the CPU path alone: a model off
CUDA is used as it is, inputs off CUDA run eagerly, and a capture of CPU tensors is refused
naming their shapes (the replay itself is checked by benchmarks/check_cuda.py on a GPU)."""

from __future__ import annotations

import pytest
import torch

from tsm_apps import build_recognizer
from tsm_apps.evaluation.scoring import view_logits
from tsm_apps.models.cuda_graph import CapturedCall, GraphedForward, graphed


def _model():
    torch.manual_seed(0)
    return build_recognizer("resnet18", 5, 4, "offline", width=0.125).eval()


def test_a_cpu_model_is_used_as_it_is():
    m = _model()
    assert graphed(m) is m
    views = torch.randn(3, 4, 3, 32, 32)
    with torch.no_grad():
        want = torch.cat([m(views[:2]), m(views[2:])])
    assert torch.equal(view_logits(m, views, batch=2), want)


def test_cpu_inputs_run_eagerly_and_a_cpu_capture_is_refused():
    m = _model()
    g = GraphedForward(m)
    x = torch.randn(1, 4, 3, 32, 32)
    with torch.no_grad():
        assert torch.equal(g(x), m(x))
    assert g._calls == {}
    with pytest.raises(ValueError, match=r"\(1, 4, 3, 32, 32\)"):
        CapturedCall(m, [x])
