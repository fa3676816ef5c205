"""``torch.compile`` against our kernels: the ResNet-50 training step (8x224, batch 8, bf16
autocast, channels-last, SGD) of TSM and TSN, each compiled whole (Inductor, default mode; the
shift is traced as slices and ``torch.cat``, which Inductor fuses with its neighbours), beside
the same steps eager (TSM on our Triton kernel), round-robin in one process.

    python benchmarks/bench_compile.py [--rounds 20]

Prints compile seconds, milliseconds per step and the ratios as one JSON line.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import torch
from torch import nn

from tsm_apps.bench.spec import Spec, SpecCast, build
from tsm_apps.bench.timing import medians, paired_ratio, time_rounds


def step_fn(model: nn.Module, forward, x, y):
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)

    def step():
        opt.zero_grad(set_to_none=True)
        nn.functional.cross_entropy(forward(x).float(), y).backward()
        opt.step()

    return step


def main(argv: list) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=20)
    a = p.parse_args(argv)
    if not torch.cuda.is_available():
        print("error: needs a CUDA device", file=sys.stderr)
        return 2
    spec, device = Spec(batch=8, dtype=torch.bfloat16), "cuda"
    g = torch.Generator().manual_seed(0)
    x = torch.randn(spec.batch, spec.segments, 3, spec.size, spec.size, generator=g).to(device)
    y = torch.randint(0, spec.classes, (spec.batch,), generator=g).to(device)
    fns, compile_s = {}, {}
    for name, shift in (("tsm", "offline"), ("tsn", None)):
        eager = build(spec, shift, device).train()
        fns[name] = step_fn(eager, SpecCast(eager, spec, device), x, y)
        model = build(spec, shift, device).train()
        compiled = torch.compile(SpecCast(model, spec, device))
        step = step_fn(model, compiled, x, y)
        t0 = time.perf_counter()
        step()
        step()
        torch.cuda.synchronize()
        compile_s[name] = round(time.perf_counter() - t0, 1)
        fns[f"{name}_compiled"] = step
        print(f"{name}: compiled in {compile_s[name]} s", flush=True)
    rounds = time_rounds(fns, a.rounds, 3, device)
    report = {
        "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "spec": spec.label,
        "compile_s": compile_s,
        "ms": {k: round(v * 1e3, 3) for k, v in medians(rounds).items()},
        **{
            f"{p}/{q}": round(paired_ratio(rounds, p, q), 4)
            for p, q in (
                ("tsm", "tsn"),
                ("tsm_compiled", "tsn_compiled"),
                ("tsm_compiled", "tsm"),
                ("tsn_compiled", "tsn"),
            )
        },
    }
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
