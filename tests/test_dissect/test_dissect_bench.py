"""``tsm bench``'s dissection throughput off the CPU: every clip is mapped once, on the device
the figure names, by the method it names (the rates are benchmarks, not tests)."""

from __future__ import annotations

import torch

from dissect import bench


def test_device_throughput_maps_every_clip_once_with_each_method(monkeypatch):
    calls = []

    def record(model, clip, method):
        calls.append((method, clip.device.type, next(model.parameters()).device.type, clip))

    monkeypatch.setattr(bench, "compute_clip_maps", record)
    figures = bench.device_throughput(True, "cpu")
    assert [f["name"] for f in figures] == [
        "dissection clips/s on cpu, exact CAM (resnet50 x0.125, 8x64x64)",
        "dissection clips/s on cpu, Grad-CAM (resnet50 x0.125, 8x64x64)",
    ]
    for method in ("cam", "gradcam"):
        mine = [c for c in calls if c[0] == method]
        assert len(mine) == 1 + 32  # a warm-up clip, then every clip once
        assert {c[1:3] for c in mine} == {("cpu", "cpu")}
        timed = [c[3] for c in mine[1:]]
        assert all(x.shape == (1, 8, 3, 64, 64) for x in timed)
        assert len({x.sum().item() for x in timed}) == 32  # 32 different clips
        assert torch.equal(mine[0][3], timed[0])  # the warm-up is the first clip
    assert all(f["value"] > 0 and f["clips"] == 32 for f in figures)
