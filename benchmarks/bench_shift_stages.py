"""Where the shift's cost sits: per ResNet-50 stage, the shifted 1x1 conv1 vs conv1 alone.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_shift_stages.py [--repeats 20] [--t 8]

For each kind of shifted block of ResNet-50 at 8x224 (input channels and size of its conv1),
times interleaved (medians, one process): conv1 alone and shift + conv1, in channels-last with
our shift and in NCHW with our shift and with the official ``zeros_like`` + slice-copy op.
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

# (stage, C_in of conv1, C_out of conv1, H=W, blocks of this kind) for ResNet-50 at 224
BLOCKS = (("layer1", 64, 64, 56, 1), ("layer1", 256, 64, 56, 2), ("layer2", 256, 128, 56, 1),
          ("layer2", 512, 128, 28, 3), ("layer3", 512, 256, 28, 1),
          ("layer3", 1024, 256, 14, 5), ("layer4", 1024, 512, 14, 1),
          ("layer4", 2048, 512, 7, 2))


@torch.no_grad()
def measure(c_in: int, c_out: int, hw: int, t: int, repeats: int) -> dict:
    conv = nn.Conv2d(c_in, c_out, 1, bias=False).eval()
    conv_cl = nn.Conv2d(c_in, c_out, 1, bias=False).eval().to(memory_format=torch.channels_last)
    x = torch.randn(t, c_in, hw, hw)
    xc = x.contiguous(memory_format=torch.channels_last)
    fns = {"cl_conv": lambda: conv_cl(xc), "cl_ours": lambda: conv_cl(temporal_shift(xc, t)),
           "nchw_conv": lambda: conv(x), "nchw_ours": lambda: conv(temporal_shift(x, t)),
           "nchw_official": lambda: conv(naive_shift(x, t))}
    return {k: v * 1e3 for k, v in time_many(fns, repeats, 2).items()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--t", type=int, default=8)
    a = p.parse_args()
    print(f"threads {torch.get_num_threads()}, load {load_average():.2f}")
    print("| block (C_in@HxW) x n | conv CL ms | +ours CL | conv NCHW | +ours NCHW | +official NCHW |")
    print("|---|---|---|---|---|---|")
    total = {"cl": 0.0, "ours": 0.0, "off": 0.0}
    for stage, c_in, c_out, hw, n in BLOCKS:
        m = measure(c_in, c_out, hw, a.t, a.repeats)
        add = (m["cl_ours"] - m["cl_conv"], m["nchw_ours"] - m["nchw_conv"],
               m["nchw_official"] - m["nchw_conv"])
        total["cl"] += n * add[0]
        total["ours"] += n * add[1]
        total["off"] += n * add[2]
        print(f"| {stage} {c_in}@{hw} x{n} | {m['cl_conv']:.2f} | {add[0]:+.2f} | "
              f"{m['nchw_conv']:.2f} | {add[1]:+.2f} | {add[2]:+.2f} |", flush=True)
    print(f"| all 16 blocks, added ms | | {total['cl']:+.1f} | | {total['ours']:+.1f} | "
          f"{total['off']:+.1f} |")
    print(f"load after {load_average():.2f}")


if __name__ == "__main__":
    main()
