"""benchmarks/bench_online_demo.py: reads the official online demo's model from a given path
(here a small file written to the official module's interface: ``MobileNetV2(n_class)`` whose
``forward(x, *shift_buffer)`` returns ``(logits, *new_buffers)``, and
``InvertedResidualWithShift.forward(x, buffer) -> (y, x[:, :C//8])``), finds its buffer
shapes, and times it beside ours; refuses a wrong path with exit code 2."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import torch

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_online_demo.py"

INTERFACE = """
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


def _script():
    spec = importlib.util.spec_from_file_location("bench_online_demo", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_times_a_model_with_the_demos_interface(tmp_path):
    demo = tmp_path / "mobilenet_v2_tsm.py"
    demo.write_text(INTERFACE)
    r = _script().measure(demo, "cpu", rounds=1, size=32)
    assert r["buffers"] == [[1, 2, 16, 16], [1, 4, 8, 8]]  # C // 8 at each shift block
    assert set(r["ms"]) == {"official", "tsn_frame", "ours_eager", "ours_static"}
    assert r["ours_best"] in ("ours_eager", "ours_static")
    assert r["ours_best/official"] == r[f"{r['ours_best']}/official"] > 0
    assert (
        r["params"]["official"]
        == 16 * 3 * 9 + 16 + 16 * 16 * 9 + 16 + 32 * 16 * 9 + 32 + 32 * 32 * 9 + 32 + 32 * 27 + 27
    )


def test_demo_step_feeds_the_new_buffers_back(tmp_path):
    demo = tmp_path / "mobilenet_v2_tsm.py"
    demo.write_text(INTERFACE)
    s = _script()
    mod = s.load_demo(demo)
    model = mod.MobileNetV2(n_class=3).eval()
    frame = torch.rand(1, 3, 32, 32)
    buffers = s.demo_buffers(mod, model, frame)
    assert all(torch.count_nonzero(b) == 0 for b in buffers)
    with torch.no_grad():
        s.official_step(model, frame, buffers)()
        assert torch.equal(buffers[0], model.features[0](frame)[:, :2])  # the frame's folds


def test_a_wrong_path_exits_2_with_one_line(tmp_path, capsys):
    s = _script()
    assert s.main(["--demo", str(tmp_path / "missing.py"), "--device", "cpu"]) == 2
    err = capsys.readouterr().err
    assert "missing.py: no such file" in err and len(err.strip().splitlines()) == 1
    other = tmp_path / "other.py"
    other.write_text("X = 1\n")
    assert s.main(["--demo", str(other), "--device", "cpu"]) == 2
    assert "defines no MobileNetV2" in capsys.readouterr().err
