"""Where a training step's time goes: ResNet-50 TSM vs TSN (8x224, batch 8, bf16 autocast,
channels-last, SGD), profiled with ``torch.profiler`` on CUDA after warm-up.

    python benchmarks/profile_train_step.py [--steps 3] [--rows 15]

Prints, per model, the kernels with the most device time (self CUDA time summed over the
profiled steps) and the device and host totals per step; then the kernels whose device time
differs most between TSM and TSN.
"""

from __future__ import annotations

import argparse
import sys

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile

from tsm_apps.bench.spec import Spec, build, spec_autocast


def step_fn(model: nn.Module, spec: Spec, device: str):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(spec.batch, spec.segments, 3, spec.size, spec.size, generator=g).to(device)
    y = torch.randint(0, spec.classes, (spec.batch,), generator=g).to(device)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)

    def step():
        opt.zero_grad(set_to_none=True)
        with spec_autocast(spec, device):
            loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

    return step


def host_split(model: nn.Module, spec: Spec, device: str, steps: int = 20) -> str:
    """Median host milliseconds of each part of a step, and the wait for the device after."""
    import statistics
    import time

    g = torch.Generator().manual_seed(0)
    x = torch.randn(spec.batch, spec.segments, 3, spec.size, spec.size, generator=g).to(device)
    y = torch.randint(0, spec.classes, (spec.batch,), generator=g).to(device)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    parts: dict = {"forward": [], "backward": [], "optimizer": [], "device wait": []}
    for i in range(steps + 5):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        with spec_autocast(spec, device):
            loss = nn.functional.cross_entropy(model(x).float(), y)
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        opt.step()
        t3 = time.perf_counter()
        torch.cuda.synchronize()
        t4 = time.perf_counter()
        if i >= 5:
            for k, a, b in (
                ("forward", t0, t1),
                ("backward", t1, t2),
                ("optimizer", t2, t3),
                ("device wait", t3, t4),
            ):
                parts[k].append((b - a) * 1e3)
    return ", ".join(f"{k} {statistics.median(v):.2f} ms" for k, v in parts.items())


def device_times(prof) -> dict:
    """``{kernel or op name: self device microseconds}`` summed over the profile."""
    out = {}
    for e in prof.key_averages():
        us = getattr(e, "self_device_time_total", None)
        if us is None:
            us = e.self_cuda_time_total
        if us > 0:
            out[e.key] = us
    return out


def main(argv: list) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--rows", type=int, default=15)
    a = p.parse_args(argv)
    if not torch.cuda.is_available():
        print("error: needs a CUDA device", file=sys.stderr)
        return 2
    spec, device, totals = Spec(batch=8, dtype=torch.bfloat16), "cuda", {}
    for name, shift in (("tsm", "offline"), ("tsn", None)):
        step = step_fn(build(spec, shift, device), spec, device)
        for _ in range(5):
            step()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(a.steps):
                step()
            torch.cuda.synchronize()
        totals[name] = device_times(prof)
        dev = sum(totals[name].values()) / a.steps / 1e3
        host = sum(e.self_cpu_time_total for e in prof.key_averages()) / a.steps / 1e3
        print(f"== {name}: device {dev:.2f} ms/step (sum of kernels), host {host:.2f} ms/step")
        for k, us in sorted(totals[name].items(), key=lambda kv: -kv[1])[: a.rows]:
            print(f"   {us / a.steps / 1e3:8.3f} ms  {k[:110]}")
    print(
        "== host time per step (no profiler): forward + loss enqueued, backward returned, "
        "optimizer step, then the device finished"
    )
    for name, shift in (("tsm", "offline"), ("tsn", None)):
        print(f"   {name}: " + host_split(build(spec, shift, device), spec, device))
    keys = set(totals["tsm"]) | set(totals["tsn"])
    diff = sorted(keys, key=lambda k: -abs(totals["tsm"].get(k, 0) - totals["tsn"].get(k, 0)))
    print("== TSM - TSN, device ms/step, largest differences")
    for k in diff[: a.rows]:
        d = (totals["tsm"].get(k, 0) - totals["tsn"].get(k, 0)) / a.steps / 1e3
        print(f"   {d:+8.3f} ms  {k[:110]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
