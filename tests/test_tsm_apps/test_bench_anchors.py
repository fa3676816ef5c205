"""The like-for-like anchors of ``tsm bench``: the marking rule on hand-made sides, the official
op re-implemented here against the official formula (written below), and the anchor figures
produced with both sides' route, layout, dtype and batch (values are benchmarks, not tests)."""

from __future__ import annotations

import pytest
import torch

from tsm_apps.bench import shift_cost
from tsm_apps.bench.anchors import Side, like_for_like, official_op_anchors, pair_figure, routed
from tsm_apps.bench.official_shift import OfficialShift, naive_shift
from tsm_apps.bench.spec import build

CL = torch.channels_last
NCHW = torch.contiguous_format


def official_formula(x, n_segment, fold_div=8, online=False):
    """mit-han-lab ops/temporal_shift.py TemporalShift.shift (inplace=False), typed from the
    official file: x.view + zeros_like + three slice copies; online: the demo's layout."""
    nt, c, h, w = x.size()
    x = x.view(nt // n_segment, n_segment, c, h, w)
    fold = c // fold_div
    out = torch.zeros_like(x)
    if online:
        out[:, 1:, :fold] = x[:, :-1, :fold]
        out[:, :, fold:] = x[:, :, fold:]
    else:
        out[:, :-1, :fold] = x[:, 1:, :fold]
        out[:, 1:, fold : 2 * fold] = x[:, :-1, fold : 2 * fold]
        out[:, :, 2 * fold :] = x[:, :, 2 * fold :]
    return out.view(nt, c, h, w)


def side(**kw) -> Side:
    base = dict(model="x", route="eager", layout="NCHW", dtype="fp32", batch=1)
    return Side(**{**base, **kw})


def test_like_for_like_needs_the_same_route_layout_dtype_and_batch():
    assert like_for_like(side(model="ours"), side(model="theirs"))
    # the two pairs that were called "met" before: a graph against eager, NCHW against CL
    assert not like_for_like(side(route="graph"), side(route="eager"))
    assert not like_for_like(side(layout="channels-last"), side(layout="NCHW"))
    assert not like_for_like(side(dtype="bfloat16"), side())
    assert not like_for_like(side(batch=16), side())
    assert not like_for_like(side(route="compiled:inductor"), side(route="compiled:aot_eager"))


def test_an_unlike_pair_has_no_goal_and_no_met():
    ours, theirs = side(model="ours", route="graph"), side(model="official demo")
    f = pair_figure("demo", ours, theirs, 0.225, "<= 0.75", "cuda", {"a_ms": 1.0})
    assert f.name == (
        "demo: ours [graph, NCHW, fp32, bs1] / official demo [eager, NCHW, fp32, bs1], "
        "NOT like for like"
    )
    assert f.goal is None and f.met is None and f.detail["like_for_like"] is False
    assert f.detail["ours"]["route"] == "graph" and f.detail["a_ms"] == 1.0
    like = pair_figure("demo", side(model="ours"), theirs, 1.2, "<= 1.00", "cpu", {})
    assert like.name.endswith(", like for like") and like.goal == "<= 1.00"
    assert like.met is False and like.detail["like_for_like"] is True
    assert pair_figure("d", side(), side(), 0.9, "<= 1.00", "cpu", {}).met is True


def test_a_side_refuses_an_unknown_route():
    with pytest.raises(ValueError, match="unknown route 'jit' of 'x'"):
        side(route="jit")


@pytest.mark.parametrize("fmt", [NCHW, CL], ids=["nchw", "channels_last"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
@pytest.mark.parametrize("online", [False, True], ids=["offline", "online"])
def test_every_official_op_variant_is_the_formula_and_keeps_the_layout(fmt, dtype, online):
    g = torch.Generator().manual_seed(0)
    base = torch.randn(12, 16, 3, 5, generator=g).to(dtype).contiguous(memory_format=fmt)
    x, ref = base.clone().requires_grad_(), base.clone().requires_grad_()
    y, want = naive_shift(x, 3, 8, online), official_formula(ref, 3, 8, online)
    assert torch.equal(y, want) and y.is_contiguous(memory_format=fmt)
    grad = torch.randn(y.shape, generator=g).to(dtype).contiguous(memory_format=fmt)
    y.backward(grad)
    want.backward(grad)
    assert torch.equal(x.grad, ref.grad) and x.grad.is_contiguous(memory_format=fmt)
    assert torch.equal(x, base)  # the input is not touched


def test_the_official_in_place_path_raises_as_the_official_code_does():
    with pytest.raises(NotImplementedError, match="no in-place path"):
        naive_shift(torch.zeros(4, 8, 2, 2), 2, inplace=True)


@pytest.mark.parametrize("key", [0, 1], ids=["own_layout_nchw", "channels_last"])
def test_the_official_model_runs_wholly_in_the_specs_layout(key):
    """Every official op sees and writes the spec's layout: no conversion inside the model."""
    spec = shift_cost.tiny_specs()["anchors"][key][1]
    official = build(spec, "offline", "cpu", official=True).eval()
    ours = build(spec, "offline", "cpu").eval()
    seen = []  # each op's input, the shifted tensor its convolution takes, the weight
    for m in official.modules():
        if isinstance(m, OfficialShift):
            m.register_forward_hook(lambda m, i, o: seen.append(i[0]))
            m.net.register_forward_pre_hook(lambda m, i: seen.extend([i[0], m.weight]))
    x = torch.randn(spec.batch, spec.segments, 3, spec.size, spec.size)
    with torch.no_grad():
        a, b = official(x), ours(x)
    assert len(seen) == 3 * 8 and all(t.is_contiguous(memory_format=spec.fmt) for t in seen)
    assert torch.allclose(a, b, atol=1e-5, rtol=1e-5)  # the same weights, the same shift


def test_op_anchors_name_both_sides_and_run_eager_and_compiled():
    figs = []
    for what, spec in shift_cost.tiny_specs()["anchors"]:
        routes = ("eager",) if spec.fmt == NCHW else ("eager", "compiled:aot_eager")
        figs += official_op_anchors(spec, "cpu", routes, what)
    assert [f.name for f in figs] == [
        "official op in its own layout (resnet18, 4x32): ours TSM [eager, NCHW, fp32, bs1] / "
        "official-op TSM [eager, NCHW, fp32, bs1], like for like",
        "official op on channels-last (resnet18, 4x32): ours TSM [eager, channels-last, "
        "bfloat16, bs2] / official-op TSM [eager, channels-last, bfloat16, bs2], like for like",
        "official op on channels-last (resnet18, 4x32): ours TSM [compiled:aot_eager, "
        "channels-last, bfloat16, bs2] / official-op TSM [compiled:aot_eager, channels-last, "
        "bfloat16, bs2], like for like",
    ]
    for f in figs:
        assert f.value > 0 and f.goal == "<= 1.00" and f.met == (f.value <= 1.0)
        assert set(f.detail) >= {"ours_ms", "official_ms", "tsn_ms", "official/tsn", "ours/tsn"}


def test_the_graph_route_refuses_off_cuda_with_one_line():
    spec = shift_cost.tiny_specs()["anchors"][0][1]
    m = build(spec, None, "cpu")
    with pytest.raises(ValueError, match="^route 'graph' needs a CUDA device, got 'cpu'$"):
        routed(m, spec, "cpu", "graph", torch.zeros(1))
    with pytest.raises(ValueError, match="unknown route 'compiled'"):
        routed(m, spec, "cpu", "compiled", torch.zeros(1))
