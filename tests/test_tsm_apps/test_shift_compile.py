"""The shift under ``torch.compile``: traced as plain slices and ``torch.cat`` (no in-place
writes, no kernel launch inside the graph), equal to the official shift forward and backward.
The ``aot_eager`` backend traces exactly what a compiler receives (Dynamo, then AOT autograd)
without generating code, so the check runs on the CPU in seconds."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from tests.test_tsm_apps.official_shift import official_shift
from tsm_apps.models.shift.layer import TemporalShift


@pytest.mark.parametrize("online", [False, True])
@pytest.mark.parametrize("fmt", [torch.contiguous_format, torch.channels_last])
def test_compiled_shift_equals_official_forward_and_backward(online, fmt):
    torch._dynamo.reset()
    g = torch.Generator().manual_seed(3)
    x = torch.randn(6, 16, 5, 7, generator=g).contiguous(memory_format=fmt)
    grad = torch.randn(6, 16, 5, 7, generator=g)
    block = TemporalShift(nn.Identity(), num_segments=3, online=online)
    compiled = torch.compile(block, backend="aot_eager", fullgraph=True)
    xc = x.clone().requires_grad_()
    y = compiled(xc)
    y.backward(grad)
    xr = x.clone().requires_grad_()
    want = official_shift(xr, 3, 8, online)
    want.backward(grad)
    assert torch.equal(y, want) and torch.equal(xc.grad, xr.grad)
    with torch.no_grad():  # inference: traced out of place, the input untouched
        before = x.clone()
        assert torch.equal(compiled(x), official_shift(x, 3, 8, online))
        assert torch.equal(x, before)
