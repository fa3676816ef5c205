import pytest
import torch

from tsm_apps import build_recognizer
from tsm_apps.bench.cli import format_table
from tsm_apps.bench.core import naive_shift
from tsm_apps.bench.timing import Figure, time_pair
from tsm_apps.models.inflate import I3D, TemporalConv, inflate_shifts
from tsm_apps.models.shift import temporal_shift


def test_naive_shift_matches_ours_both_ways():
    x = torch.randn(8, 64, 3, 3)
    assert torch.equal(naive_shift(x, 4), temporal_shift(x, 4))


def test_temporal_conv_centre_inflation_is_per_frame_conv():
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(6, 4, 1, stride=2)
    tc = TemporalConv(conv, num_segments=3)
    x = torch.randn(6, 6, 8, 8)
    assert torch.allclose(tc(x), conv(x), atol=1e-6)
    with torch.no_grad():
        tc.conv.weight[:, :, 0] = 1.0  # a past tap now mixes frame t-1 into frame t
    y = tc(x).view(2, 3, 4, 4, 4)
    assert torch.allclose(y[:, 0], conv(x).view(2, 3, 4, 4, 4)[:, 0], atol=1e-6)  # zero padding
    assert not torch.allclose(y[:, 1], conv(x).view(2, 3, 4, 4, 4)[:, 1])


def test_inflate_replaces_every_shift():
    m = build_recognizer("resnet50", 3, 2, "offline", width=0.125).eval()
    inflate_shifts(m)
    assert sum(isinstance(x, TemporalConv) for x in m.modules()) == 16
    assert m(torch.randn(1, 2, 3, 32, 32)).shape == (1, 3)
    with pytest.raises(ValueError, match="no TemporalShift"):
        inflate_shifts(build_recognizer("resnet18", 3, 2, None, width=0.125))


@pytest.mark.parametrize("layout", [torch.contiguous_format, torch.channels_last_3d])
def test_native_i3d_equals_the_transposing_twin_and_tsn_at_init(layout):
    torch.manual_seed(0)
    tsm = build_recognizer("resnet50", 3, 4, "offline", width=0.125, dropout=0.0).eval()
    tsn = build_recognizer("resnet50", 3, 4, None, width=0.125, dropout=0.0).eval()
    tsn.load_state_dict({k.replace(".net.", "."): v for k, v in tsm.state_dict().items()})
    x = torch.randn(2, 4, 3, 32, 32)
    i3d = I3D(tsm, layout).eval()
    assert not any(isinstance(m, (torch.nn.Conv2d, torch.nn.BatchNorm2d)) for m in i3d.modules())
    assert (
        sum(isinstance(m, torch.nn.Conv3d) and m.kernel_size == (3, 1, 1) for m in i3d.modules())
        == 16
    )
    with torch.no_grad():
        assert (i3d(x) - tsn(x)).abs().max() <= 1e-5  # centre inflation = per-frame 2-D
        twin = inflate_shifts(tsm)
        for a, b in zip(
            [m for m in twin.modules() if isinstance(m, TemporalConv)],
            [
                m
                for m in i3d.modules()
                if isinstance(m, torch.nn.Conv3d) and m.kernel_size == (3, 1, 1)
            ],
        ):
            a.conv.weight.normal_(0, 0.1)
            b.weight.copy_(a.conv.weight)
        assert (i3d(x) - twin(x)).abs().max() <= 1e-5
        assert (i3d(x) - tsn(x)).abs().max() > 1e-3


def test_time_pair_and_table():
    ta, tb = time_pair(lambda: sum(range(1000)), lambda: None, repeats=3, warmup=0)
    assert ta > 0 and tb >= 0
    table = format_table([Figure("x", 1.5, "x", "<= 2", True)])
    assert "| x | 1.500 x | <= 2 | yes | cpu |" in table
