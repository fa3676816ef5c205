"""The official online demo against our online step, like for like
(:mod:`tsm_apps.bench.official_demo`, ``tsm bench --official-online-demo``,
``benchmarks/bench_online_demo.py``).

The demo's model is read from the user's checkout; the tests write a STAND-IN for it, a small
file with the official module's interface (``online_demo/mobilenet_v2_tsm.py``: ``MobileNetV2(
n_class)`` whose ``features`` hold ``InvertedResidualWithShift`` blocks, ``forward(x,
*shift_buffer) -> (logits, *new_buffers)``, a block's ``forward(x, shift_buffer) -> (y,
x[:, :C // 8])``). It is not the official network; values are benchmarks, not tests."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import torch

from tsm_apps.bench import cli as bench_cli
from tsm_apps.bench.official_demo import demo_anchors, load_demo, models, stepper
from tsm_apps.cli import main as tsm_main

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_online_demo.py"

STAND_IN = """
import torch
from torch import nn


class InvertedResidualWithShift(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, 1, 1)

    def forward(self, x, shift_buffer):
        c = x.size(1)
        x1, x2 = x[:, : c // 8], x[:, c // 8:]
        return x + self.conv(torch.cat((shift_buffer, x2), dim=1)), x1


class MobileNetV2(nn.Module):
    def __init__(self, n_class=1000):
        super().__init__()
        self.features = nn.ModuleList([nn.Conv2d(3, 16, 3, 2, 1), InvertedResidualWithShift(16),
                                       nn.Conv2d(16, 32, 3, 2, 1), InvertedResidualWithShift(32)])
        self.classifier = nn.Linear(32, n_class)

    def forward(self, x, *shift_buffer):
        out, i = [], 0
        for f in self.features:
            if isinstance(f, InvertedResidualWithShift):
                x, s = f(x, shift_buffer[i])
                i += 1
                out.append(s)
            else:
                x = f(x)
        return (self.classifier(x.mean(3).mean(2)), *out)
"""

ORT = "onnxruntime:CPUExecutionProvider"


@pytest.fixture
def stand_in(tmp_path):
    path = tmp_path / "mobilenet_v2_tsm.py"
    path.write_text(STAND_IN)
    return path


def test_the_demo_anchors_pair_the_same_route_on_both_sides(stand_in):
    figs = demo_anchors(stand_in, "cpu", rounds=1, size=32)  # off CUDA: eager, ONNX Runtime
    head = "official online demo anchor (mobilenetv2, 32, per frame): "
    assert [f.name for f in figs] == [
        head + f"ours online MobileNetV2 step [{r}, NCHW, fp32, bs1] / "
        f"official online demo step [{r}, NCHW, fp32, bs1], like for like"
        for r in ("eager", ORT)
    ]
    for f in figs:
        assert f.value > 0 and f.goal == "<= 1.00" and f.met == (f.value <= 1.0)
        assert (
            f.detail["like_for_like"] and f.detail["ours"]["route"] == f.detail["theirs"]["route"]
        )
        assert f.detail["buffers"] == [[1, 2, 16, 16], [1, 4, 8, 8]]  # C // 8 at each block
        assert set(f.detail) >= {"ours_ms", "official_ms", "load"}


def two_steps(step, frame, buffers):
    """The reference: the step called twice by its interface, the new buffers passed back."""
    with torch.no_grad():
        first = step(frame, *buffers)
        return step(frame, *first[1:])[0], first[1:]


def close(a, b, rel) -> bool:
    """``a`` within ``rel`` of ``b``'s largest magnitude (our head's random logits are tiny)."""
    return bool((a - b).abs().max() <= rel * b.abs().max())


@pytest.mark.parametrize("route", ["eager", ORT])
def test_every_route_feeds_the_new_buffers_back(stand_in, tmp_path, route):
    ours, theirs, frame, mine, their_bufs = models(stand_in, "cpu", 32)
    for step, zeros in ((ours, mine), (theirs, their_bufs)):
        want, state = two_steps(step, frame, zeros)
        buffers = [b.clone() for b in zeros]
        run = stepper(step, frame, buffers, route, tmp_path)
        with torch.no_grad():
            run()
            got = torch.as_tensor(run())
        assert close(got, want, 1e-4)
        assert not close(step(frame, *zeros)[0], want, 1e-2)  # the buffers count
    assert torch.equal(state[0], theirs.features[0](frame)[:, :2])  # the stand-in's first folds


def test_the_graph_route_refuses_off_cuda(stand_in, tmp_path):
    ours, _, frame, mine, _ = models(stand_in, "cpu", 32)
    with pytest.raises(ValueError, match="^route 'graph' needs a CUDA device, got cpu$"):
        stepper(ours, frame, mine, "graph", tmp_path)
    with pytest.raises(ValueError, match="unknown route 'tvm'"):
        stepper(ours, frame, mine, "tvm", tmp_path)


def test_a_wrong_file_is_one_line_naming_it(tmp_path):
    with pytest.raises(ValueError, match=r"missing\.py: no such file"):
        load_demo(tmp_path / "missing.py")
    other = tmp_path / "other.py"
    other.write_text("X = 1\n")
    with pytest.raises(ValueError, match=r"other\.py: defines no MobileNetV2"):
        load_demo(other)
    broken = tmp_path / "broken.py"
    broken.write_text("import not_a_module_here\n")
    with pytest.raises(ValueError, match=r"broken\.py: cannot be imported \(ModuleNotFoundError"):
        load_demo(broken)


def test_tsm_bench_refuses_a_wrong_path_with_exit_2(tmp_path, capsys):
    missing = tmp_path / "missing.py"
    assert tsm_main(["bench", "--device", "cpu", "--official-online-demo", str(missing)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"tsm bench: error: --official-online-demo {missing}: no such file")
    assert len(err.splitlines()) == 1


def test_tsm_bench_adds_the_demo_figures(stand_in, tmp_path, monkeypatch):
    monkeypatch.setattr(bench_cli, "collect", lambda *a: [])  # only the demo's figures
    out = tmp_path / "bench.json"
    argv = ["--device", "cpu", "--quick", "--official-online-demo", str(stand_in)]
    assert bench_cli.main(argv + ["--out", str(out)]) == 0
    figs = json.loads(out.read_text())["figures"]
    assert [f["detail"]["ours"]["route"] for f in figs] == ["eager", ORT]
    assert all(f["name"].endswith(", like for like") and f["device"] == "cpu" for f in figs)


def _script():
    spec = importlib.util.spec_from_file_location("bench_online_demo", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_script_prints_the_figures_and_refuses_a_wrong_path(stand_in, tmp_path, capsys):
    s = _script()
    assert (
        s.main(["--demo", str(stand_in), "--device", "cpu", "--rounds", "1", "--size", "32"]) == 0
    )
    figs = json.loads(capsys.readouterr().out)
    assert [f["detail"]["theirs"]["route"] for f in figs] == ["eager", ORT]
    assert s.main(["--demo", str(tmp_path / "missing.py"), "--device", "cpu"]) == 2
    err = capsys.readouterr().err
    assert "missing.py: no such file" in err and len(err.strip().splitlines()) == 1
