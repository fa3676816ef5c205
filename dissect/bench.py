"""``tsm bench`` figures of the dissection package.

* exact CAM cost / plain forward (goal <= 1.1): the CAM path (:func:`dissect.cam.compute_cam`)
  runs the trunk once, the classifier as a 1x1x1 convolution on the last features and the
  bilinear upsampling; the plain path is ``model(x)`` under ``no_grad``. Interleaved, median
  after warm-up. ``benchmarks/bench_cam.py`` runs the same comparison with its own options.
* dissection clips/s per process for CAM and Grad-CAM (one clip at a time, as the job does;
  maps only: decoding, scoring and file writing are not included): on the CPU with one thread,
  on CUDA with the model and clips on the device (the maps of each clip finished before the
  clock stops);
* 2-process efficiency on CPU: two ``torchrun`` gloo processes, one thread each, every rank
  computing the maps of its shard of the clips between two barriers: clips/s of the pair /
  (2 x clips/s of one process). 1.0 is perfect; the figure says what two cores of this machine
  give, shared memory bandwidth included.

Full mode: R-50, 8 x 224 x 224, 400 classes (a Kinetics TSM); quick mode: R-50 at width 0.25,
8 x 112 x 112 for the ratio, width 0.125 at 8 x 64 x 64 for the throughput figures.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from tsm_apps import build_recognizer
from tsm_apps.bench.timing import synchronize, time_pair
from tsm_apps.bench.workers import run_workers

from .cam import compute_cam
from .methods import compute_clip_maps

CAM_GOAL = "<= 1.1"
QUICK = dict(arch="resnet50", width=0.25, segments=8, size=112, batch=1, repeats=5)
QUICK_RATE = dict(arch="resnet50", width=0.125, segments=8, size=64, clips=4)
FULL = dict(arch="resnet50", width=1.0, segments=8, size=224, batch=1, repeats=10, clips=6)
ON_DEVICE = dict(clips=32)  # clips/s on CUDA: a GPU takes more clips for a steady figure
TIMED_METHODS = ("cam", "gradcam")


def _model(s: dict, device: str = "cpu") -> torch.nn.Module:
    torch.manual_seed(0)
    return build_recognizer(s["arch"], 400, s["segments"], width=s["width"]).to(device).eval()


def _method_name(method: str) -> str:
    return "exact CAM" if method == "cam" else "Grad-CAM"


def _what(s: dict) -> str:
    return f"{s['arch']} x{s['width']:g}, {s['segments']}x{s['size']}x{s['size']}"


def cam_ratio(s: dict, device: str) -> dict:
    model = _model(s, device)
    x = torch.randn(s["batch"], s["segments"], 3, s["size"], s["size"], device=device)

    def forward() -> torch.Tensor:
        with torch.no_grad():
            return model(x)

    t_fwd, t_cam = time_pair(forward, lambda: compute_cam(model, x), s["repeats"], 2, device)
    return {
        "name": f"dissect exact CAM / plain forward ({_what(s)})",
        "ratio": t_cam / t_fwd,
        "unit": "x",
        "goal": CAM_GOAL,
        "cam_ms": t_cam * 1e3,
        "forward_ms": t_fwd * 1e3,
    }


def shard_rate(
    s: dict, method: str, rank: int = 0, world: int = 1, barrier=None, device: str = "cpu"
) -> float:
    """Clips/s of this process computing the maps of clips ``[rank::world]`` of ``s['clips']``
    (after one warm-up clip) on ``device``; ``barrier`` brackets the timed part across
    processes."""
    model = _model(s, device)
    g = torch.Generator().manual_seed(0)
    clips = [
        torch.randn(1, s["segments"], 3, s["size"], s["size"], generator=g).to(device)
        for _ in range(s["clips"])
    ][rank::world]
    compute_clip_maps(model, clips[0], method)  # warm-up
    if barrier:
        barrier()
    synchronize(device)
    t0 = time.perf_counter()
    for x in clips:
        compute_clip_maps(model, x, method)
    synchronize(device)
    if barrier:
        barrier()
    return s["clips"] / (time.perf_counter() - t0)  # all clips, over every process


def _worker(s: dict, out: Path) -> None:
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    rates = {m: shard_rate(s, m, rank, world, dist.barrier) for m in TIMED_METHODS}
    dist.destroy_process_group()
    if rank == 0:
        out.write_text(json.dumps(rates))


def _two_processes(quick: bool) -> dict:
    """Total clips/s of two torchrun processes, per method (rank 0 writes them to a file)."""
    return run_workers(__spec__.name, ["--quick"] if quick else [], nproc=2)


def throughput(quick: bool) -> list:
    """Per-process clips/s (one thread) of each method and the 2-process efficiency."""
    s = QUICK_RATE if quick else FULL
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        one = {m: shard_rate(s, m) for m in TIMED_METHODS}
    finally:
        torch.set_num_threads(threads)
    two = _two_processes(quick)
    out = []
    for m in TIMED_METHODS:
        name = _method_name(m)
        out.append(
            {
                "name": f"dissection clips/s per process, {name} ({_what(s)}, 1 thread)",
                "value": one[m],
                "unit": "clips/s",
                "goal": None,
            }
        )
        out.append(
            {
                "name": f"dissection 2-process efficiency, {name} (gloo, 1 thread each)",
                "value": two[m] / (2 * one[m]),
                "unit": "",
                "goal": "1.0 is perfect",
                "clips_per_s_1": one[m],
                "clips_per_s_2": two[m],
                "clips": s["clips"],
            }
        )
    return out


def device_throughput(quick: bool, device: str) -> list:
    """Clips/s of each method in one process with the model on ``device`` (CUDA)."""
    s = dict(QUICK_RATE if quick else FULL, **ON_DEVICE)
    return [
        {
            "name": f"dissection clips/s on {device}, {_method_name(m)} ({_what(s)})",
            "value": shard_rate(s, m, device=device),
            "unit": "clips/s",
            "goal": None,
            "clips": s["clips"],
        }
        for m in TIMED_METHODS
    ]


def figures(quick: bool, device: str) -> list[dict]:
    """The CAM / forward ratio on ``device``; clips/s and the 2-process efficiency on CPU,
    clips/s of one process on another device."""
    s = QUICK if quick else FULL
    rates = throughput(quick) if device == "cpu" else device_throughput(quick, device)
    return [cam_ratio(s, device)] + rates


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true")
    p.add_argument("--out", type=Path, required=True, help="rank 0 writes its figures here")
    a = p.parse_args()
    _worker(QUICK_RATE if a.quick else FULL, a.out)
