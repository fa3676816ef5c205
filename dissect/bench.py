"""``tsm bench`` figure of the dissection package: exact CAM cost / plain forward (goal <= 1.1).

The CAM path (:func:`dissect.cam.compute_cam`) runs the trunk once, the classifier as a 1x1x1
convolution on the last features and the bilinear upsampling to the input size; the plain path
is ``model(x)`` under ``no_grad``. Same model, same input, interleaved, median after warm-up.
``benchmarks/bench_cam.py`` runs the same comparison with its own options (and Grad-CAM).
"""
from __future__ import annotations

import torch

from tsm_apps import build_recognizer
from tsm_apps.bench.timing import time_pair

from .cam import compute_cam

CAM_GOAL = "<= 1.1"
QUICK = dict(arch="resnet50", width=0.25, segments=8, size=112, batch=1, repeats=5)
FULL = dict(arch="resnet50", width=1.0, segments=8, size=224, batch=1, repeats=10)


def figures(quick: bool, device: str) -> list[dict]:
    """One :func:`tsm_apps.bench.cli.plugin_figure` dict: the CAM / forward latency ratio."""
    s = QUICK if quick else FULL
    torch.manual_seed(0)
    model = build_recognizer(s["arch"], 174, s["segments"], width=s["width"]).to(device).eval()
    x = torch.randn(s["batch"], s["segments"], 3, s["size"], s["size"], device=device)

    def forward() -> torch.Tensor:
        with torch.no_grad():
            return model(x)

    t_fwd, t_cam = time_pair(forward, lambda: compute_cam(model, x), s["repeats"], 2, device)
    what = f"{s['arch']} x{s['width']:g}, {s['segments']}x{s['size']}x{s['size']}"
    return [{"name": f"dissect exact CAM / plain forward ({what})", "ratio": t_cam / t_fwd,
             "unit": "x", "goal": CAM_GOAL, "cam_ms": t_cam * 1e3, "forward_ms": t_fwd * 1e3}]
