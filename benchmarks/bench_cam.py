"""Cost of the exact CAM against a plain forward pass (goal: ratio <= 1.1).

    .venv/bin/python benchmarks/bench_cam.py [--arch resnet50] [--width 0.5] [--segments 8]
                                             [--size 112] [--batch 2] [--repeats 10]

The CAM path (:func:`dissect.cam.compute_cam`) runs the trunk once, the head on the same
features, one channel dot product per position for the chosen class and the bilinear
upsampling to the input size; the plain path is ``model(x)`` under ``no_grad``. Grad-CAM (one
forward + backward through the library) is timed too, for reference. Prints medians of
interleaved runs and the ratios.
"""

from __future__ import annotations

import argparse
import sys

import torch

from dissect.cam import compute_cam
from dissect.gradcam import compute_gradcam
from tsm_apps import build_recognizer
from tsm_apps.bench.timing import time_pair
from tsm_apps.distributed import auto_device

CAM_GOAL = 1.1


def parse(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--arch", default="resnet50")
    p.add_argument("--width", type=float, default=0.5)
    p.add_argument("--segments", type=int, default=8)
    p.add_argument("--size", type=int, default=112)
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--classes", type=int, default=174)
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--no-gradcam", action="store_true")
    return p.parse_args(argv)


def main(argv=None) -> int:
    a = parse(argv)
    torch.manual_seed(0)
    device = auto_device()
    model = build_recognizer(a.arch, a.classes, a.segments, width=a.width).to(device).eval()
    x = torch.randn(a.batch, a.segments, 3, a.size, a.size, device=device)

    def forward() -> torch.Tensor:
        with torch.no_grad():
            return model(x)

    t_fwd, t_cam = time_pair(forward, lambda: compute_cam(model, x), a.repeats, device=device)
    print(f"device {device}, {a.arch} width {a.width}, input {tuple(x.shape)}")
    print(f"plain forward  {t_fwd * 1e3:8.2f} ms")
    print(f"exact CAM      {t_cam * 1e3:8.2f} ms  (incl. upsampling to {a.size}x{a.size})")
    ratio = t_cam / t_fwd
    print(
        f"CAM / forward ratio: {ratio:.3f} (goal <= {CAM_GOAL}: "
        f"{'met' if ratio <= CAM_GOAL else 'NOT met'})"
    )
    if not a.no_gradcam:
        _, t_gc = time_pair(
            forward, lambda: compute_gradcam(model, x, "gradcam"), a.repeats, device=device
        )
        print(f"Grad-CAM       {t_gc * 1e3:8.2f} ms  ratio {t_gc / t_fwd:.3f} (reference)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
