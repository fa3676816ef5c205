import pytest
import torch

from tests.test_tsm_apps.official_shift import official_shift
from tsm_apps import TemporalShift, online_shift_step, temporal_shift


def _clip(n=2, t=3, c=16, hw=1):
    """Value = 1000*clip + 100*frame + channel (+0.5 on the second pixel)."""
    x = torch.zeros(n, t, c, hw, hw)
    for i in range(n):
        for j in range(t):
            x[i, j] = (1000 * i + 100 * j + torch.arange(c, dtype=torch.float)).view(c, 1, 1)
    return x.reshape(n * t, c, hw, hw)


def test_offline_shift_exact_values():
    x = _clip()
    y = temporal_shift(x, 3, fold_div=8).view(2, 3, 16)
    # fold = 2: channels 0,1 take frame t+1; 2,3 take t-1; 4.. unchanged; zeros at boundaries
    assert y[0, 0].tolist() == [100, 101, 0, 0] + list(range(4, 16))
    assert y[0, 1].tolist() == [200, 201, 2, 3] + [100 + c for c in range(4, 16)]
    assert y[0, 2].tolist() == [0, 0, 102, 103] + [200 + c for c in range(4, 16)]
    # the second clip never receives values from the first
    assert y[1, 0].tolist() == [1100, 1101, 0, 0] + [1000 + c for c in range(4, 16)]
    assert y[1, 2].tolist() == [0, 0, 1102, 1103] + [1200 + c for c in range(4, 16)]


def test_online_shift_exact_values():
    x = _clip()
    y = temporal_shift(x, 3, fold_div=8, online=True).view(2, 3, 16)
    assert y[0, 0].tolist() == [0, 0] + list(range(2, 16))
    assert y[0, 1].tolist() == [0, 1] + [100 + c for c in range(2, 16)]
    assert y[0, 2].tolist() == [100, 101] + [200 + c for c in range(2, 16)]
    assert y[1, 0].tolist() == [0, 0] + [1000 + c for c in range(2, 16)]


def test_fold_div_and_spatial_preserved():
    x = _clip(n=1, t=2, c=8, hw=2)
    y = temporal_shift(x, 2, fold_div=4).view(2, 8, 2, 2)
    assert torch.equal(y[0, 0], torch.full((2, 2), 100.0))
    assert torch.equal(y[1, 2], torch.full((2, 2), 2.0))
    assert torch.equal(y[:, 4:], x.view(2, 8, 2, 2)[:, 4:])


def test_no_input_mutation_and_gradient():
    x = torch.randn(6, 16, 3, 3, requires_grad=True)
    before = x.detach().clone()
    y = temporal_shift(x, 3)
    assert torch.equal(x.detach(), before)
    y.sum().backward()
    g = x.grad.view(2, 3, 16, 3, 3)
    # a shifted channel's gradient is 0 where the value was dropped at a boundary
    assert g[:, 0, :2].abs().sum() == 0  # frame 0 ch 0:2 never used (taken by t-1 = none)
    assert g[:, 2, 2:4].abs().sum() == 0  # last frame ch 2:4 never used
    assert torch.equal(g[:, 1], torch.ones(2, 16, 3, 3))
    assert torch.equal(g[:, :, 4:], torch.ones(2, 3, 12, 3, 3))
    assert torch.autograd.gradcheck(
        lambda a: temporal_shift(a, 2, 4),
        torch.randn(4, 8, 2, 2, dtype=torch.double, requires_grad=True),
    )


@pytest.mark.parametrize(
    "shape,t,fd,msg",
    [
        ((5, 16, 2, 2), 2, 8, r"\(5, 16, 2, 2\).*num_segments=2"),
        ((4, 4, 2, 2), 2, 8, r"leaves no channel.*C=4"),
        ((4, 16, 2), 2, 8, r"\(N\*T, C, H, W\), got shape \(4, 16, 2\)"),
    ],
)
def test_bad_shapes_name_the_shape(shape, t, fd, msg):
    with pytest.raises(ValueError, match=msg):
        temporal_shift(torch.zeros(shape), t, fd)


def test_streaming_step_matches_clip():
    x = torch.randn(2 * 4, 16, 2, 2)
    want = temporal_shift(x, 4, online=True).view(2, 4, 16, 2, 2)
    buf = None
    v = x.view(2, 4, 16, 2, 2)
    for t in range(4):
        y, buf = online_shift_step(v[:, t], buf)
        assert torch.equal(y, want[:, t])
    with pytest.raises(ValueError, match="buffer shape"):
        online_shift_step(v[:, 0], torch.zeros(2, 3, 2, 2))


def test_module_wraps_net_with_official_name():
    m = TemporalShift(torch.nn.Conv2d(16, 4, 1), num_segments=2)
    assert "net.weight" in m.state_dict()
    assert m(torch.randn(4, 16, 3, 3)).shape == (4, 4, 3, 3)


@pytest.mark.parametrize("online", [False, True])
@pytest.mark.parametrize("layout", [torch.contiguous_format, torch.channels_last])
@pytest.mark.parametrize("t,hw", [(3, 5), (1, 2), (4, 1)])
def test_bit_exact_with_official_forward_backward(layout, online, t, hw):
    torch.manual_seed(0)
    base = torch.randn(2 * t, 24, hw, hw)
    g = torch.randn(2 * t, 24, hw, hw)
    x = base.clone(memory_format=layout).requires_grad_()
    ref = base.clone().requires_grad_()
    y, want = temporal_shift(x, t, 8, online), official_shift(ref, t, 8, online)
    assert torch.equal(y, want)
    if hw > 1:
        assert y.is_contiguous(memory_format=layout)
    y.backward(g.contiguous(memory_format=layout))
    want.backward(g)
    assert torch.equal(x.grad, ref.grad)


def test_channels_last_gradcheck_and_no_mutation():
    x = torch.randn(4, 8, 2, 3, dtype=torch.double).contiguous(memory_format=torch.channels_last)
    before = x.clone()
    temporal_shift(x, 2, 4)
    assert torch.equal(x, before)
    assert torch.autograd.gradcheck(
        lambda a: temporal_shift(a, 2, 4, online=True), x.requires_grad_()
    )


@pytest.mark.parametrize("layout", [torch.contiguous_format, torch.channels_last])
def test_streaming_buffer_owns_its_storage(layout):
    x = torch.randn(2, 16, 3, 3).contiguous(memory_format=layout)
    y, buf = online_shift_step(x, None)
    assert torch.equal(y[:, :2], torch.zeros(2, 2, 3, 3)) and torch.equal(y[:, 2:], x[:, 2:])
    assert y.is_contiguous(memory_format=layout)
    # 2 streams x 2 channels x 3 x 3 floats = 144 bytes, not the frame's 1152
    assert buf.untyped_storage().nbytes() == 2 * 2 * 3 * 3 * 4
    assert buf.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
    assert torch.equal(buf, x[:, :2])
