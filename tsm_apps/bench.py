"""``tsm bench``: the suite's performance figures, each measured side by side in one run.

Every figure is a ratio or a count taken in the same process (median of interleaved repeats
after warm-up), on CPU and also on CUDA when present. Figures of the detector and the CAM live
with their packages (``detection.bench``, ``dissect.bench``) and are collected by name, the same
way the ``tsm`` command dispatches, so ``tsm_apps`` never imports them at module level.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import sys
import time
from pathlib import Path

import torch

from .bench_ddp import ddp_scaling
from .inflate import inflate_shifts
from .online import OnlineRecognizer
from .recognizer import build_recognizer
from .shift import temporal_shift
from .timing import Figure, time_one, time_pair

PLUGINS = ("detection.bench", "dissect.bench")


def _models(shift_a, shift_b, arch="resnet50", t=8, device="cpu"):
    torch.manual_seed(0)
    a = build_recognizer(arch, 400, t, shift_a).to(device).eval()
    b = build_recognizer(arch, 400, t, shift_b).to(device).eval()
    return a, b


@torch.no_grad()
def shift_overhead(quick: bool, device: str) -> list:
    """TSM / TSN latency, ResNet-50, 8 frames at 224x224, batch 1, offline shift."""
    tsm, tsn = _models("offline", None, device=device)
    x = torch.randn(1, 8, 3, 224, 224, device=device)
    ta, tb = time_pair(lambda: tsm(x), lambda: tsn(x), 3 if quick else 10, 1, device)
    r = ta / tb
    return [Figure("shift overhead: TSM/TSN latency (R50, 8x224, bs1)", r, "x", "<= 1.03",
                   r <= 1.03, device, {"tsm_ms": ta * 1e3, "tsn_ms": tb * 1e3})]


@torch.no_grad()
def online_latency(quick: bool, device: str) -> list:
    """Per-frame latency of online TSM vs TSN (ResNet-50, 224x224) and the shift cache size."""
    torch.manual_seed(0)
    tsm = build_recognizer("resnet50", 400, 8, "online").to(device).eval()
    tsn = build_recognizer("resnet50", 400, 8, None).to(device).eval()
    frame = torch.randn(1, 3, 224, 224, device=device)
    with OnlineRecognizer(tsm) as online:
        ta, tb = time_pair(lambda: online.step(frame), lambda: tsn.fc(tsn.backbone(frame).mean((2, 3))),
                           5 if quick else 20, 2, device)
        cache = online.cache_bytes
    r = ta / tb
    return [Figure("online per-frame latency: TSM/TSN (R50, 224)", r, "x", "<= 1.02", r <= 1.02,
                   device, {"tsm_ms": ta * 1e3, "tsn_ms": tb * 1e3}),
            Figure("online shift cache (R50, 224, fp32)", cache / 2 ** 20, "MiB", "paper ~0.9 MB",
                   None, device, {"bytes": cache})]


@torch.no_grad()
def tsm_vs_i3d(quick: bool, device: str) -> list:
    """Throughput of TSM over its I3D-replace twin (each shifted 1x1 conv -> 3x1x1)."""
    tsm, i3d = _models("offline", "offline", device=device)
    inflate_shifts(i3d)
    size = 160 if quick else 224
    x = torch.randn(1, 8, 3, size, size, device=device)
    ta, tb = time_pair(lambda: tsm(x), lambda: i3d(x), 3 if quick else 10, 1, device)
    r = tb / ta
    return [Figure(f"TSM vs I3D-replace throughput (R50, 8x{size})", r, "x", ">= 1.5", r >= 1.5,
                   device, {"tsm_ms": ta * 1e3, "i3d_ms": tb * 1e3})]


def naive_shift(x: torch.Tensor, t: int, fold_div: int = 8) -> torch.Tensor:
    """The straightforward shift: zeros plus slice copies (the official implementation)."""
    nt, c, h, w = x.shape
    v = x.view(nt // t, t, c, h, w)
    fold = c // fold_div
    out = torch.zeros_like(v)
    out[:, :-1, :fold] = v[:, 1:, :fold]
    out[:, 1:, fold:2 * fold] = v[:, :-1, fold:2 * fold]
    out[:, :, 2 * fold:] = v[:, :, 2 * fold:]
    return out.view(nt, c, h, w)


def shift_op_speed(quick: bool, device: str) -> list:
    """Forward + backward of ours vs the naive shift on ResNet-50 layer1-sized activations."""
    x = torch.randn(8, 256, 56, 56, device=device, requires_grad=True)

    def run(fn):
        def f():
            fn(x, 8).sum().backward()
            x.grad = None
        return f
    ta, tb = time_pair(run(temporal_shift), run(naive_shift), 10 if quick else 50, 3, device)
    r = ta / tb
    return [Figure("shift op fwd+bwd: ours/naive (8x256x56x56)", r, "x", "<= 1.00", r <= 1.0,
                   device, {"ours_ms": ta * 1e3, "naive_ms": tb * 1e3})]


def data_loading(quick: bool, device: str) -> list:
    """Sparse 8-segment sampling from mp4 (clips/s) vs the training step's consumption."""
    import tempfile

    import numpy as np

    from .data import read_video_frames, write_video
    from .data.sampling import sample_train
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "clip.mp4"
        rng = np.random.default_rng(0)
        write_video(path, rng.integers(0, 255, (250 if quick else 500, 112, 112, 3), np.uint8), 25)
        n = 5 if quick else 20
        srng = np.random.default_rng(0)
        t0 = time.perf_counter()
        for _ in range(n):
            read_video_frames(path, sample_train(250 if quick else 500, 8, srng))
        load = n / (time.perf_counter() - t0)
    torch.manual_seed(0)
    model = build_recognizer("resnet18", 8, 8, "offline", width=0.25, dropout=0.0).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(8, 8, 3, 96, 96, device=device)
    y = torch.zeros(8, dtype=torch.long, device=device)

    def step():
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    consume = 8 / time_one(step, 3 if quick else 10, 1, device)
    r = load / consume
    return [Figure("data: sparse mp4 loading / train-step consumption (1 worker)", r, "x",
                   ">= 1 (loader keeps up)", r >= 1.0, device,
                   {"load_clips_per_s": load, "train_clips_per_s": consume})]


CORE = (shift_overhead, online_latency, tsm_vs_i3d, shift_op_speed, data_loading)


def meets(value: float, goal: str | None) -> bool | None:
    """Whether ``value`` meets a goal written ``'<= 1.05'`` or ``'>= 1.5'`` (None otherwise)."""
    parts = (goal or "").split()
    if len(parts) < 2 or parts[0] not in ("<=", ">="):
        return None
    try:
        bound = float(parts[1])
    except ValueError:
        return None
    return value <= bound if parts[0] == "<=" else value >= bound


def plugin_figure(d: dict | Figure, device: str) -> Figure:
    """A plugin's figure: a :class:`Figure` or a dict ``{name, ratio, unit, goal, a, b, ...}``."""
    if isinstance(d, Figure):
        return d
    if "name" not in d or ("ratio" not in d and "value" not in d):
        raise ValueError(f"bench plugin figure needs 'name' and 'ratio' (or 'value'): got {sorted(d)}")
    value = float(d.get("ratio", d.get("value")))
    detail = {k: v for k, v in d.items() if k not in ("name", "ratio", "value", "unit", "goal")}
    return Figure(d["name"], value, d.get("unit", "x"), d.get("goal"), meets(value, d.get("goal")),
                  device, detail)


def collect(quick: bool, devices: list) -> list:
    figures = []
    for device in devices:
        for fn in CORE:
            print(f"[bench] {fn.__name__} on {device}", flush=True)
            figures += fn(quick, device)
        for name in PLUGINS:
            print(f"[bench] {name} on {device}", flush=True)
            figures += [plugin_figure(d, device)
                        for d in importlib.import_module(name).figures(quick, device)]
    print("[bench] ddp_scaling (gloo, cpu)", flush=True)
    figures += ddp_scaling(quick)
    return figures


def format_table(figures: list) -> str:
    rows = ["| figure | value | goal | met | device |", "|---|---|---|---|---|"]
    for f in figures:
        met = "" if f.met is None else ("yes" if f.met else "no")
        rows.append(f"| {f.name} | {f.value:.3f} {f.unit} | {f.goal or ''} | {met} | {f.device} |")
    return "\n".join(rows)


def machine() -> dict:
    info = {"platform": platform.platform(), "python": platform.python_version(),
            "torch": torch.__version__, "cpus": os.cpu_count(), "threads": torch.get_num_threads()}
    if torch.cuda.is_available():
        info["cuda"] = torch.cuda.get_device_name(0)
    return info


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="tsm bench", description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer repeats (under 5 minutes on 2 cores)")
    p.add_argument("--out", default="runs/bench/bench.json", help="JSON output")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    a = p.parse_args(argv)
    if a.device == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda: no CUDA device is available")
    devices = ["cpu"] + (["cuda"] if a.device != "cpu" and torch.cuda.is_available() else [])
    if a.device == "cuda":
        devices = ["cuda"]
    t0 = time.perf_counter()
    figures = collect(a.quick, devices)
    report = {"machine": machine(), "quick": a.quick, "seconds": time.perf_counter() - t0,
              "figures": [f.to_dict() for f in figures]}
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(report, indent=2))
    os.replace(tmp, out)
    print(format_table(figures))
    print(f"[bench] {len(figures)} figures in {report['seconds']:.0f} s -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
