"""Many online streams of one model: frames/s stepped as one batch against each stream alone.

    .venv/bin/python benchmarks/bench_live_streams.py --out benchmarks/results/live_streams_cpu.json \\
        [--device cpu|cuda] [--archs mobilenetv2 resnet50] [--streams 1 4 8 16] [--repeats 10] \\
        [--arch-repeats resnet50=5] [--threads 2] [--exact]

For each architecture (random weights, 400 classes, online shift, the default test protocol's 224
crop) one :class:`~tsm_apps.live.engine.BatchedEngine` steps ``n`` streams a tick, batched (one
engine step) and alone (one step a stream, the same engine), every stream count and both sides
round-robin in one process (:func:`tsm_apps.bench.live.measure_streams`; frames prepared
before the timing, only the engine step timed). Prints a table a row per (arch, streams):
frames/s alone and batched, batched/alone (median of per-round ratios), the batched step's
p50/p95 ms, whether both sides gave identical logits (and their largest difference over the
largest logit), the load average before/after. The engine runs its default kernels
(``--exact``: its exact mode, MKL's strict mode requested for this process). On the CPU also
the exact mode's cost: one batched step of 1 and 4 streams, exact / default engine (in a child
process with MKL's strict mode unless this one has it). On CUDA the engine replays CUDA graphs
(one per batch bucket). Writes JSON to ``--out``: the machine, the rows, the raw seconds of
every round, the figures as ``tsm bench`` writes them.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import torch

from tsm_apps.bench import live
from tsm_apps.io import atomic_write_json
from tsm_apps.live.exact import request_strict_mkl

ROOT = Path(__file__).resolve().parents[1]


def cpu_model() -> str:
    """The ``model name`` line of /proc/cpuinfo ('' where there is none)."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return platform.processor()
    return next((ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("model name")), "")


def commit() -> str:
    """The checkout's commit (with ``+dirty`` when tracked files changed), '' outside git."""

    def git(*args: str) -> str:
        r = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else ""

    head = git("rev-parse", "--short", "HEAD")
    return head + (
        "+dirty" if head and git("status", "--porcelain", "--untracked-files=no") else ""
    )


def machine(device: str) -> dict:
    info = {
        "torch": torch.__version__,
        "python": platform.python_version(),
        "cpu": cpu_model(),
        "cpus": os.cpu_count(),
        "threads": torch.get_num_threads(),
        "commit": commit(),
        "device": device,
    }
    if torch.device(device).type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(0)
    return info


HEADER = (
    "| arch | streams | alone frames/s | batched frames/s | batched/alone | p50 step ms "
    "| p95 step ms | identical (max rel diff) | load before/after |\n"
    "|---|---|---|---|---|---|---|---|---|"
)


def table_rows(result: dict) -> list:
    load = "{:.2f} / {:.2f}".format(*result["load"])
    return [
        f"| {result['arch']} | {n} | {r['alone_fps']:.2f} | {r['batched_fps']:.2f} | "
        f"{r['ratio']:.3f} | {r['batched_p50_ms']:.1f} | {r['batched_p95_ms']:.1f} | "
        f"{r['identical']} ({r['max_rel_diff']:.1e}) | {load} |"
        for n, r in result["rows"].items()
    ]


def exact_rows(figures: list) -> list:
    out = [
        "| figure | exact/default | default ms/frame | exact ms/frame | load before/after |",
        "|---|---|---|---|---|",
    ]
    for f in figures:
        d, load = f.detail, "{:.2f} / {:.2f}".format(*f.detail["load"])
        out.append(
            f"| {f.name} | {f.value:.2f} | {d['default_ms_per_frame']:.1f} | "
            f"{d['exact_ms_per_frame']:.1f} | {load} |"
        )
    return out


def arch_repeats(pairs: list) -> dict:
    out = {}
    for p in pairs:
        arch, _, n = p.partition("=")
        if not n.isdigit() or int(n) < 1:
            raise SystemExit(f"--arch-repeats takes ARCH=N with N >= 1, got {p!r}")
        out[arch] = int(n)
    return out


def parse(argv: list) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="JSON output path")
    p.add_argument("--device", default="cpu", help="cpu or cuda (CUDA graphs on)")
    p.add_argument("--archs", nargs="+", default=list(live.ARCHS))
    p.add_argument("--streams", nargs="+", type=int, default=list(live.STREAMS))
    p.add_argument("--repeats", type=int, default=10, help="rounds per architecture")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--arch-repeats", nargs="*", default=[], help="ARCH=N: fewer rounds for one")
    p.add_argument("--exact-repeats", type=int, default=5, help="rounds of the exact cost")
    p.add_argument("--exact", action="store_true", help="the engine in its exact mode")
    p.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    return p.parse_args(argv)


def main(argv: list) -> int:
    a = parse(argv)
    if torch.device(a.device).type == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: no CUDA device is available")
    if a.exact:
        request_strict_mkl()  # before MKL starts: exact mode needs it
    torch.set_num_threads(a.threads)
    per_arch = arch_repeats(a.arch_repeats)
    base = replace(live.FULL, streams=tuple(a.streams), warmup=a.warmup, exact=a.exact)
    report = {"machine": machine(a.device), "results": [], "figures": []}
    print(HEADER, flush=True)
    for arch in a.archs:
        setting = replace(base, archs=(arch,), repeats=per_arch.get(arch, a.repeats))
        result = live.measure_streams(arch, setting, a.device)
        print("\n".join(table_rows(result)), flush=True)
        report["results"].append({**result, "repeats": setting.repeats})
        report["figures"] += [f.to_dict() for f in live.stream_figures(result, a.device)]
    if torch.device(a.device).type == "cpu":
        setting = replace(base, exact_repeats=a.exact_repeats)
        cost = [f for arch in a.archs for f in live.exact_figures(arch, setting)]
        print("\n".join(exact_rows(cost)))
        report["figures"] += [f.to_dict() for f in cost]
    print(f"machine: {report['machine']}")
    print(f"-> {atomic_write_json(Path(a.out), report)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
