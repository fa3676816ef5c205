"""The inference path of the shift: shifted in place, restored exactly, same values as the
official op (the official ``zeros_like`` + slice copies, re-written in test_shift.py)."""

import pytest
import torch
from torch import nn

from tests.test_tsm_apps.official_shift import official_shift
from tsm_apps import TemporalShift, build_recognizer, online_shift_step, temporal_shift
from tsm_apps.models.online import OnlineRecognizer
from tsm_apps.models.shift import online_step_in_place, shifted_in_place

LAYOUTS = [torch.contiguous_format, torch.channels_last]


class Probe(nn.Module):
    """Records what the wrapped layer sees; returns a new tensor (or its input, ``echo``)."""

    def __init__(self, echo: bool = False) -> None:
        super().__init__()
        self.seen, self.echo = [], echo

    def forward(self, x):
        self.seen.append(x.clone())
        return x if self.echo else x * 2


@pytest.mark.parametrize("online", [False, True])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_in_place_block_sees_official_values_and_input_comes_back(layout, online):
    torch.manual_seed(0)
    base = torch.randn(2 * 4, 24, 3, 5)
    x = base.clone(memory_format=layout)
    with torch.no_grad(), shifted_in_place(x, 4, 8, online) as inside:
        assert inside is x
        assert torch.equal(x, official_shift(base, 4, 8, online))
    assert torch.equal(x, base) and x.is_contiguous(memory_format=layout)


def test_in_place_restores_on_error_and_refuses_autograd():
    base = torch.randn(6, 16, 2, 2)
    x = base.clone()
    with pytest.raises(RuntimeError, match="boom"), torch.no_grad():
        with shifted_in_place(x, 3):
            raise RuntimeError("boom")
    assert torch.equal(x, base)
    with pytest.raises(ValueError, match=r"autograd off.*\(6, 16, 2, 2\)"):
        with shifted_in_place(x, 3):
            pass
    with pytest.raises(ValueError, match="dense"), torch.no_grad():
        with shifted_in_place(x[:, :, :, :1], 3):
            pass


@pytest.mark.parametrize("echo", [False, True])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_module_no_grad_equals_copy_path(layout, echo):
    base = torch.randn(2 * 3, 16, 4, 4)
    x = base.clone(memory_format=layout)
    m = TemporalShift(Probe(echo), num_segments=3)
    want = m.net(temporal_shift(base, 3))  # autograd on: the copying shift
    with torch.no_grad():
        y = m(x)
    assert torch.equal(y, want) and torch.equal(m.net.seen[-1], official_shift(base, 3))
    assert torch.equal(x, base)  # echo: the output was copied before restore


@pytest.mark.parametrize("layout", LAYOUTS)
def test_streaming_in_place_matches_functional_step(layout):
    v = torch.randn(2, 4, 16, 3, 3)
    buf_ref = buf = None
    for t in range(4):
        frame = v[:, t].clone(memory_format=layout)
        want, buf_ref = online_shift_step(frame, buf_ref)
        with torch.no_grad(), online_step_in_place(frame, buf) as buf:
            assert torch.equal(frame, want)
        assert torch.equal(frame, v[:, t]) and torch.equal(buf, buf_ref)
        assert buf.untyped_storage().nbytes() == 2 * 2 * 3 * 3 * 4  # fold channels only


@pytest.mark.parametrize("online", [False, True])
def test_recognizer_inference_bit_identical_to_copy_path(online):
    torch.manual_seed(0)
    m = build_recognizer("resnet18", 5, 4, "online" if online else "offline", width=0.25).eval()
    x = torch.randn(2, 4, 3, 32, 32)
    with torch.enable_grad():
        want = m(x).detach()
    with torch.no_grad():
        got = m(x)
    assert torch.equal(got, want)
    if online:
        with OnlineRecognizer(m) as stream:
            steps = [stream.step(x[:, t]) for t in range(4)]
        assert torch.allclose(torch.stack(steps).mean(0), want, atol=1e-5)  # consensus: mean
