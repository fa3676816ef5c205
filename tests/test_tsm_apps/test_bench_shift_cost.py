"""The shift-cost figures (written for ``tsm bench --device cuda``) run on the CPU at small
sizes, and the models they time compute what their names say (values are benchmarks, not
tests)."""

from __future__ import annotations

import torch

from tsm_apps.bench import shift_cost
from tsm_apps.bench.core import FIGURES, cuda_shift_cost
from tsm_apps.bench.spec import build
from tsm_apps.models.shift.layer import TemporalShift


def test_every_shift_cost_figure_runs_on_cpu_at_small_sizes():
    figs = shift_cost.figures(True, "cpu", shift_cost.tiny_specs())
    names = [f.name for f in figs]
    assert [n.split(" (")[0] for n in names] == [
        "shift cost, inference: TSM/TSN",
        "shift cost, inference: TSM/TSN",
        "shift cost, training step: TSM/TSN",
        "shift cost, online per frame: TSM/TSN frame",
        "shift cost, online per frame: TSM/TSN frame",
        "shift cost, residual epilogue + shift: fused/unfused",
        "official op in its own layout",  # off CUDA the eager route only
        "official op on channels-last",
    ]
    assert "bs2, bfloat16, channels-last" in names[1] and "bs1, fp32, NCHW" in names[0]
    assert names[4].startswith("shift cost, online per frame: TSM/TSN frame (mobilenetv2,")
    assert names[4].endswith(", static)")  # off CUDA: the static-buffer step
    assert "ours TSM [eager, NCHW, fp32, bs1] / official-op TSM [eager, NCHW," in names[6]
    assert "[eager, channels-last, bfloat16, bs2], like for like" in names[7]
    for f in figs:
        assert f.value > 0 and f.device == "cpu" and f.goal.startswith("<= ")
        assert f.met == (f.value <= float(f.goal.split()[1]))
    assert set(figs[0].detail) >= {"tsm_ms", "tsn_ms", "tsm/tsn"}
    assert set(figs[2].detail) >= {"tsm_ms", "tsn_ms", "official_tsm_ms"}
    assert names[5].endswith("((8, 32, 8, 8), bfloat16)")  # stage-1 output, 2 clips x 4
    assert set(figs[5].detail) >= {
        "fused_ms",
        "unfused_ms",
        "relu_add_ms",
        "fused_train_ms",
        "fused/unfused",
        "fused/relu_add",
        "unfused/relu_add",
        "fused_train/unfused_train",
    }
    assert set(figs[3].detail) >= {
        "tsm_eager_ms",
        "tsm_static_ms",
        "tsn_eager_ms",
        "tsm_static/tsm_eager",
    }


def test_the_cuda_variants_run_their_code_on_cpu():
    """Off CUDA the variants take the CPU path (the graphs run eagerly): the code runs."""
    spec = shift_cost.tiny_specs()["inference_bs1"]
    (fig,) = shift_cost.inference(spec, "cpu", variants=True)
    assert set(fig.detail) >= {
        "tsm_kernel_copy_ms",
        "tsm_copy_ms",
        "tsm_graph_ms",
        "tsn_graph_ms",
        "tsm_graph/tsn_graph",
        "tsm_fused_ms",
        "tsm_fused_graph_ms",
        "tsm_fused/tsm",
        "tsm_fused_graph/tsn_graph",
    }


def test_the_official_op_model_shifts_like_ours_with_the_official_op():
    spec = shift_cost.tiny_specs()["inference_bs1"]
    ours = build(spec, "offline", "cpu").eval()
    official = build(spec, "offline", "cpu", official=True).eval()
    tsn = build(spec, None, "cpu").eval()
    assert not any(isinstance(m, TemporalShift) for m in official.modules())
    assert sum(isinstance(m, TemporalShift) for m in ours.modules()) == 8  # every block
    x = torch.randn(2, spec.segments, 3, spec.size, spec.size)
    with torch.no_grad():
        a, b, c = ours(x), official(x), tsn(x)
    assert torch.allclose(a, b, atol=1e-5, rtol=1e-5)
    assert not torch.allclose(a, c, atol=1e-3)  # same weights, the shift changes the logits


def test_core_adds_the_shift_cost_figures_on_cuda_only():
    assert cuda_shift_cost in FIGURES
    assert cuda_shift_cost(True, "cpu") == []
