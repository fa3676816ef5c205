"""Per-frame latency of our online MobileNetV2 TSM against the official online demo's model.

    .venv/bin/python benchmarks/bench_online_demo.py \\
        --demo /path/to/temporal-shift-module/online_demo/mobilenet_v2_tsm.py [--device cuda]

The official file (mit-han-lab/temporal-shift-module, ``online_demo/mobilenet_v2_tsm.py``) is
imported from the path given, never copied here. Its ``MobileNetV2(n_class=27)`` runs as the
demo runs it: one ``(1, 3, 224, 224)`` frame and the shift buffers as inputs, the new buffers
as outputs fed back at the next step (buffer shapes from walking its ``features`` the way its
``forward`` does). Ours: ``build_recognizer("mobilenetv2", 27, shift="online")`` through
:class:`~tsm_apps.models.online.OnlineRecognizer` in every mode that runs on the device
(``eager``, ``static``; ``graph`` on CUDA), and our TSN's 2-D frame. All run round-robin in
one process, autograd off, fp32; ratios are medians of per-round ratios (goal on CUDA: ours
<= 0.75x the official model). Prints one JSON line.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

import torch
from torch import nn

from tsm_apps.bench.timing import load_average, medians, paired_ratio, time_rounds
from tsm_apps.distributed import auto_device
from tsm_apps.models.online import OnlineRecognizer
from tsm_apps.models.recognizer import build_recognizer

CLASSES = 27  # the demo's Jester head


def load_demo(path: Path):
    """The official ``mobilenet_v2_tsm`` module read from ``path``."""
    if not path.is_file():
        raise ValueError(
            f"--demo {path}: no such file (expected the official online_demo/mobilenet_v2_tsm.py)"
        )
    spec = importlib.util.spec_from_file_location("official_mobilenet_v2_tsm", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for name in ("MobileNetV2", "InvertedResidualWithShift"):
        if not hasattr(mod, name):
            raise ValueError(f"--demo {path}: defines no {name} (not the official online demo)")
    return mod


@torch.no_grad()
def demo_buffers(mod, model: nn.Module, frame: torch.Tensor) -> list:
    """Zero buffers ``(N, C_i // 8, h_i, w_i)`` for ``model`` (official ``MobileNetV2``), found
    by running its ``features`` the way its ``forward`` does."""
    x, out = frame, []
    for f in model.features:
        if isinstance(f, mod.InvertedResidualWithShift):
            b = x.new_zeros(x.shape[0], x.shape[1] // 8, *x.shape[2:])
            out.append(b)
            x = f(x, b)[0]
        else:
            x = f(x)
    return out


def official_step(model: nn.Module, frame: torch.Tensor, buffers: list):
    """One demo step: the new buffers replace the old ones (the demo's loop)."""

    def step():
        out = model(frame, *buffers)
        buffers[:] = out[1:]
        return out[0]

    return step


@torch.no_grad()
def measure(demo: Path, device: str, rounds: int, size: int = 224) -> dict:
    mod = load_demo(demo)
    torch.manual_seed(0)
    official = mod.MobileNetV2(n_class=CLASSES).to(device).eval()
    frame = torch.randn(1, 3, size, size, device=device)
    buffers = demo_buffers(mod, official, frame)
    tsn = build_recognizer("mobilenetv2", CLASSES, 8, None).to(device).eval()
    fns = {
        "official": official_step(official, frame, buffers),
        "tsn_frame": lambda: tsn.fc(tsn.backbone(frame).mean((2, 3))),
    }
    modes = ("eager", "static") + (("graph",) if torch.device(device).type == "cuda" else ())
    recs = {}
    for mode in modes:
        model = build_recognizer("mobilenetv2", CLASSES, 8, "online").to(device).eval()
        recs[mode] = OnlineRecognizer(model, mode=mode)
        fns[f"ours_{mode}"] = lambda r=recs[mode]: r.step(frame)
    load = load_average()
    try:
        t = time_rounds(fns, rounds, 5, device)
    finally:
        for r in recs.values():
            r.close()
    best = min((f"ours_{m}" for m in modes), key=lambda k: medians(t)[k])
    return {
        "device": torch.cuda.get_device_name(0) if device.startswith("cuda") else "cpu",
        "torch": torch.__version__,
        "rounds": rounds,
        "frame": size,
        "ms": {k: round(v * 1e3, 3) for k, v in medians(t).items()},
        "ours_best": best,
        "ours_best/official": paired_ratio(t, best, "official"),
        "goal": "<= 0.75 on CUDA",
        **{f"ours_{m}/official": paired_ratio(t, f"ours_{m}", "official") for m in modes},
        **{f"ours_{m}/tsn_frame": paired_ratio(t, f"ours_{m}", "tsn_frame") for m in modes},
        "buffers": [list(b.shape) for b in buffers],
        "params": {
            "official": sum(p.numel() for p in official.parameters()),
            "ours": sum(p.numel() for p in recs[modes[0]].model.parameters()),
        },
        "load": [load, load_average()],
    }


def main(argv: list) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--demo",
        type=Path,
        required=True,
        help="path of the official online_demo/mobilenet_v2_tsm.py",
    )
    p.add_argument("--device", default=auto_device().type)
    p.add_argument("--rounds", type=int, default=300)
    p.add_argument("--size", type=int, default=224)
    a = p.parse_args(argv)
    try:
        report = measure(a.demo, a.device, a.rounds, a.size)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
