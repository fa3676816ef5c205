"""Where the shift's cost sits: per ResNet-50 stage, the shifted 1x1 conv1 vs conv1 alone.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_shift_stages.py [--repeats 20] [--t 8]

For each kind of shifted block of ResNet-50 at 8x224 (input channels and size of its conv1),
times interleaved (medians, one process), autograd off: conv1 alone and shift + conv1, in
channels-last with our copying shift and with ``TemporalShift``'s in-place inference path, in
NCHW with our copying shift, the in-place path and the official ``zeros_like`` + slice-copy op.
Prints the added milliseconds per block and per stage (times the block count) and their sum,
plus the load average before and after (the machine is shared).
"""

from __future__ import annotations

import argparse

import torch
from torch import nn

from tsm_apps.bench.core import naive_shift
from tsm_apps.bench.timing import load_average, time_many
from tsm_apps.models.shift import temporal_shift
from tsm_apps.models.shift.layer import TemporalShift

# (stage, C_in of conv1, C_out of conv1, H=W, blocks of this kind) for ResNet-50 at 224
BLOCKS = (
    ("layer1", 64, 64, 56, 1),
    ("layer1", 256, 64, 56, 2),
    ("layer2", 256, 128, 56, 1),
    ("layer2", 512, 128, 28, 3),
    ("layer3", 512, 256, 28, 1),
    ("layer3", 1024, 256, 14, 5),
    ("layer4", 1024, 512, 14, 1),
    ("layer4", 2048, 512, 7, 2),
)


@torch.no_grad()
def measure(c_in: int, c_out: int, hw: int, t: int, repeats: int) -> dict:
    conv = nn.Conv2d(c_in, c_out, 1, bias=False).eval()
    conv_cl = nn.Conv2d(c_in, c_out, 1, bias=False).eval().to(memory_format=torch.channels_last)
    x = torch.randn(t, c_in, hw, hw)
    xc = x.contiguous(memory_format=torch.channels_last)
    in_place, in_place_cl = TemporalShift(conv, t), TemporalShift(conv_cl, t)
    fns = {
        "cl_conv": lambda: conv_cl(xc),
        "cl_ours": lambda: conv_cl(temporal_shift(xc, t)),
        "cl_inplace": lambda: in_place_cl(xc),
        "nchw_conv": lambda: conv(x),
        "nchw_ours": lambda: conv(temporal_shift(x, t)),
        "nchw_inplace": lambda: in_place(x),
        "nchw_official": lambda: conv(naive_shift(x, t)),
    }
    return {k: v * 1e3 for k, v in time_many(fns, repeats, 2).items()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--t", type=int, default=8)
    a = p.parse_args()
    print(f"threads {torch.get_num_threads()}, load {load_average():.2f}")
    print(
        "| block (C_in@HxW) x n | conv CL ms | +copy CL | +in place CL | conv NCHW | +copy NCHW "
        "| +in place NCHW | +official NCHW |"
    )
    print("|---|---|---|---|---|---|---|---|")
    cols = (
        ("cl_ours", "cl_conv"),
        ("cl_inplace", "cl_conv"),
        ("nchw_ours", "nchw_conv"),
        ("nchw_inplace", "nchw_conv"),
        ("nchw_official", "nchw_conv"),
    )
    total = [0.0] * len(cols)
    for stage, c_in, c_out, hw, n in BLOCKS:
        m = measure(c_in, c_out, hw, a.t, a.repeats)
        add = [m[k] - m[base] for k, base in cols]
        total = [tot + n * d for tot, d in zip(total, add)]
        print(
            f"| {stage} {c_in}@{hw} x{n} | {m['cl_conv']:.2f} | {add[0]:+.2f} | {add[1]:+.2f} | "
            f"{m['nchw_conv']:.2f} | {add[2]:+.2f} | {add[3]:+.2f} | {add[4]:+.2f} |",
            flush=True,
        )
    print(
        "| all 16 blocks, added ms | | "
        + " | ".join(f"{v:+.1f}" if i != 2 else f"| {v:+.1f}" for i, v in enumerate(total))
        + " |"
    )
    print(f"load after {load_average():.2f}")


if __name__ == "__main__":
    main()
