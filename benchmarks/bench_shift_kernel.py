"""The shift op alone on CUDA: our Triton kernels against the official shift (``zeros_like`` +
slice copies, eager) and against ``torch.compile`` of that same official shift (Inductor
generates its own Triton kernel), at ResNet-50 activation sizes; with the bandwidth each
achieves (bytes it must move / time) beside a device-to-device copy's.

    python benchmarks/bench_shift_kernel.py [--out shift_kernel.json]

Forward + backward (training) and forward only; inference's in-place pair (shift, then undo:
moves only the shifted quarter of the channels, twice). Times are medians of
``triton.testing.do_bench`` (CUDA events). Prints a table and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import sys

import torch

from tsm_apps.bench.official_shift import naive_shift
from tsm_apps.models.shift import kernel as shift_kernel
from tsm_apps.models.shift import temporal_shift

CL = torch.channels_last
# (N*T, C, H, W): ResNet-50's block inputs of layer1 and layer3, one 8-frame clip and 16 clips
SHAPES = ((8, 256, 56, 56), (8, 1024, 14, 14), (128, 256, 56, 56))
SETTINGS = (("fp32", torch.float32, torch.contiguous_format), ("bf16", torch.bfloat16, CL))


def bench(fn) -> float:
    from triton.testing import do_bench

    return do_bench(fn, warmup=25, rep=100, return_mode="median")  # ms


def copy_bandwidth() -> float:
    """GB/s of a large device-to-device copy, counting bytes read and written."""
    a = torch.empty(2**28, dtype=torch.float32, device="cuda")
    b = torch.empty_like(a)
    ms = bench(lambda: b.copy_(a))
    return 2 * a.numel() * 4 / ms / 1e6


def one(shape, dtype, fmt, compiled) -> dict:
    x = torch.randn(shape, device="cuda").to(dtype).contiguous(memory_format=fmt)
    g = torch.randn_like(x)
    nbytes = x.numel() * x.element_size()
    xr = x.detach().requires_grad_()

    def fwd_bwd(fn):
        def run():
            y = fn(xr, 8)
            y.backward(g)
            xr.grad = None

        return run

    with torch.no_grad():
        ref = naive_shift(x, 8)
        out = temporal_shift(x, 8)
        comp = compiled(x, 8)
    ok = torch.equal(ref, out) and torch.equal(ref, comp)
    fold = shape[1] // 8
    row = {
        "shape": list(shape),
        "dtype": str(dtype).replace("torch.", ""),
        "format": "channels_last" if fmt == CL else "NCHW",
        "equal": ok,
    }
    with torch.no_grad():
        row["fwd_ms"] = {
            "ours": bench(lambda: temporal_shift(x, 8)),
            "official": bench(lambda: naive_shift(x, 8)),
            "compiled_official": bench(lambda: compiled(x, 8)),
        }
        y = x.clone()

        def pair():
            edge = shift_kernel.shift_in_place(y, 8, fold, (1, -1))
            shift_kernel.undo_shift_in_place(y, edge, 8, fold, (1, -1))

        row["in_place_pair_ms"] = bench(pair)
    row["fwd_bwd_ms"] = {
        "ours": bench(fwd_bwd(temporal_shift)),
        "official": bench(fwd_bwd(naive_shift)),
        "compiled_official": bench(fwd_bwd(compiled)),
    }
    # the fewest bytes: out-of-place reads and writes the tensor once; the in-place pair reads
    # and writes the moved quarter twice (plus the edge, 1/8 of a frame's quarter)
    row["ours_fwd_GBps"] = 2 * nbytes / row["fwd_ms"]["ours"] / 1e6
    row["in_place_pair_GBps"] = 4 * nbytes / 4 / row["in_place_pair_ms"] / 1e6
    return row


@torch.no_grad()
def host_costs(calls: int = 3000) -> dict:
    """Host microseconds per call, on a tiny tensor (the GPU work is negligible, so the host's
    launch path sets the rate): a torch op, a raw launch of the Triton shift kernel, and each
    form of the shift as ``TemporalShift`` runs it at inference."""
    import time

    from torch import nn

    from tsm_apps.models.shift import cuda_shift_path
    from tsm_apps.models.shift.layer import TemporalShift

    x = torch.randn(8, 64, 8, 8, device="cuda")
    out = torch.empty_like(x)
    block = TemporalShift(nn.Identity(), 8)

    def per_call(fn) -> float:
        for _ in range(100):
            fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        return (time.perf_counter() - t0) / calls * 1e6

    def under(path):
        def run():
            with cuda_shift_path(path):
                block(x)

        return run

    xg = x.clone().requires_grad_()
    ones = torch.ones_like(x)

    def train(fn):
        def run():
            with torch.enable_grad():
                fn(xg).backward(ones)

        return run

    return {
        "torch relu_": per_call(lambda: x.relu_()),
        "training: x * 1.0, forward + backward": per_call(train(lambda v: v * 1.0)),
        "training: our shift, forward + backward": per_call(train(lambda v: temporal_shift(v, 8))),
        "training: official op, forward + backward": per_call(train(lambda v: naive_shift(v, 8))),
        "torch empty_like": per_call(lambda: torch.empty_like(x)),
        "triton launch (shift_into)": per_call(
            lambda: shift_kernel.shift_into(out, x, 8, 8, (1, -1))
        ),
        "TemporalShift, default": per_call(lambda: block(x)),
        "TemporalShift, in-place pair": per_call(under("kernel")),
        "TemporalShift, out-of-place kernel": per_call(under("kernel_copy")),
        "TemporalShift, slice copies": per_call(under("copy")),
        "official op (5 torch ops)": per_call(lambda: naive_shift(x, 8)),
    }


def main(argv: list) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    if not torch.cuda.is_available():
        print("error: needs a CUDA device", file=sys.stderr)
        return 2
    torch._dynamo.config.recompile_limit = 64  # one compile per shape, dtype, format, grad mode
    compiled = torch.compile(naive_shift, dynamic=False)
    report = {
        "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "copy_GBps": copy_bandwidth(),
        "rows": [],
    }
    print(f"{report['device']}, torch {report['torch']}, copy {report['copy_GBps']:.0f} GB/s")
    print(
        "| shape | dtype | format | equal | fwd ours / official / compiled (ms) | "
        "fwd+bwd ours / official / compiled (ms) | in-place pair (ms) | ours fwd GB/s |"
    )
    for shape in SHAPES:
        for _, dtype, fmt in SETTINGS:
            r = one(shape, dtype, fmt, compiled)
            report["rows"].append(r)
            f, fb = r["fwd_ms"], r["fwd_bwd_ms"]
            print(
                f"| {tuple(shape)} | {r['dtype']} | {r['format']} | {r['equal']} | "
                f"{f['ours']:.4f} / {f['official']:.4f} / {f['compiled_official']:.4f} | "
                f"{fb['ours']:.4f} / {fb['official']:.4f} / {fb['compiled_official']:.4f} | "
                f"{r['in_place_pair_ms']:.4f} | {r['ours_fwd_GBps']:.0f} |",
                flush=True,
            )
    report["host_us_per_call"] = host_costs()
    for k, v in report["host_us_per_call"].items():
        print(f"host us per call: {k}: {v:.1f}")
    if a.out:
        with open(a.out, "w") as fh:
            json.dump(report, fh, indent=1)
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
