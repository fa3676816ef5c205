"""Where the whole-network TSM/TSN gap sits: torch.profiler's self CPU time per op, TSM vs TSN.

    .venv/bin/python benchmarks/profile_shift_ops.py [--repeats 10] [--sessions 2]

ResNet-50 in the default layout (channels-last), autograd off: offline, one 8x224 clip (our
in-place shift); online, one 224 frame through ``OnlineRecognizer`` against TSN's per-frame
forward. The two models are profiled in alternating sessions (``--sessions`` each, ``--repeats``
calls per session). Prints per op the mean ms per call of each model and the difference, the ops
that only TSM runs (the shift's own work: copies, slices, views, the buffer's allocation) and
the ops both run (convolutions, BN, ReLU, adds: their difference is run-to-run noise), each as a
share of TSN's total, and the load average before and after (the machine may be shared).
"""

from __future__ import annotations

import argparse

import torch
from torch.profiler import ProfilerActivity, profile

from tsm_apps.bench.core import clip_pair, frame_pair
from tsm_apps.bench.timing import load_average

SHARED = (
    "convolution",
    "batch_norm",
    "add_",
    "clamp_min",
    "relu",
    "max_pool",
    "addmm",
    "mean",
    "sum",
    "div_",
)


def per_op_ms(fn, repeats: int) -> dict:
    """Mean self CPU ms per call of each op of ``fn``."""
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(repeats):
            fn()
    return {e.key: e.self_cpu_time_total / 1e3 / repeats for e in prof.key_averages()}


def compare(fns: dict, repeats: int, sessions: int) -> tuple:
    """``({op: (tsm ms, tsn ms)}, tsn total ms)`` averaged over alternating sessions."""
    for _ in range(2):
        for fn in fns.values():
            fn()
    acc: dict = {"tsm": {}, "tsn": {}}
    for _ in range(sessions):
        for name, fn in fns.items():
            for op, ms in per_op_ms(fn, repeats).items():
                acc[name][op] = acc[name].get(op, 0.0) + ms / sessions
    ops = set(acc["tsm"]) | set(acc["tsn"])
    table = {op: (acc["tsm"].get(op, 0.0), acc["tsn"].get(op, 0.0)) for op in ops}
    return table, sum(acc["tsn"].values())


def report(title: str, table: dict, tsn_total: float) -> None:
    shared = {op: v for op, v in table.items() if any(s in op for s in SHARED)}
    own = {op: v for op, v in table.items() if op not in shared}
    print(f"\n{title}: TSN total {tsn_total:.2f} ms per call")
    print("| op | TSM ms | TSN ms | TSM - TSN |\n|---|---|---|---|")
    for op, (a, b) in sorted(table.items(), key=lambda kv: -abs(kv[1][0] - kv[1][1]))[:14]:
        print(f"| {op} | {a:.3f} | {b:.3f} | {a - b:+.3f} |")
    for name, group in (
        ("ops TSM adds (shift, buffers, views)", own),
        ("ops both run (conv, BN, ReLU, add)", shared),
    ):
        d = sum(a - b for a, b in group.values())
        print(f"{name}: {d:+.2f} ms = {100 * d / tsn_total:+.2f}% of TSN")


@torch.no_grad()
def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--sessions", type=int, default=2)
    a = p.parse_args()
    print(f"threads {torch.get_num_threads()}, load {load_average():.2f}")
    report("offline, R-50 8x224 clip", *compare(clip_pair(), a.repeats, a.sessions))
    with frame_pair() as fns:
        report("online, R-50 224 frame", *compare(fns, 4 * a.repeats, a.sessions))
    print(f"\nload after {load_average():.2f}")


if __name__ == "__main__":
    main()
