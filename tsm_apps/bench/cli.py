"""``tsm bench``: the suite's performance figures, each measured side by side in one run.

Every figure is a ratio or a count taken in the same process (median of interleaved repeats
after warm-up), on CPU and also on CUDA when present. The figures come from the functions
registered in the ``tsm.bench`` entry-point group (``name = package.module:figures``, each
``figures(quick, device) -> list``), so a package adds figures without ``tsm_apps`` naming it.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path

import torch

from ..io import atomic_write_json
from ..options import add_options, option, options_from
from .official_demo import demo_anchors, load_demo
from .timing import Figure, meets

GROUP = "tsm.bench"
FIRST = ("core",)  # shown first; the other groups follow by name


def plugin_figure(d: dict | Figure, device: str) -> Figure:
    """A plugin's figure: a :class:`Figure` or a dict ``{name, ratio, unit, goal, a, b, ...}``."""
    if isinstance(d, Figure):
        return d
    if "name" not in d or ("ratio" not in d and "value" not in d):
        raise ValueError(
            f"bench plugin figure needs 'name' and 'ratio' (or 'value'): got {sorted(d)}"
        )
    value = float(d.get("ratio", d.get("value")))
    detail = {k: v for k, v in d.items() if k not in ("name", "ratio", "value", "unit", "goal")}
    return Figure(
        d["name"],
        value,
        d.get("unit", "x"),
        d.get("goal"),
        meets(value, d.get("goal")),
        device,
        detail,
    )


def providers() -> list:
    """The ``tsm.bench`` entry points, ``core`` first, then by name."""
    eps = sorted(entry_points(group=GROUP), key=lambda ep: (ep.name not in FIRST, ep.name))
    if not eps:
        raise RuntimeError(f"no '{GROUP}' entry points: is the project installed (make test)?")
    return eps


def collect(quick: bool, devices: list, groups: tuple = ()) -> list:
    figures = []
    for device in devices:
        for ep in providers():
            if groups and ep.name not in groups:
                continue
            print(f"[bench] {ep.name} on {device}", flush=True)
            figures += [plugin_figure(d, device) for d in ep.load()(quick, device)]
    return figures


def format_table(figures: list) -> str:
    rows = ["| figure | value | goal | met | device |", "|---|---|---|---|---|"]
    for f in figures:
        met = "" if f.met is None else ("yes" if f.met else "no")
        rows.append(f"| {f.name} | {f.value:.3f} {f.unit} | {f.goal or ''} | {met} | {f.device} |")
    return "\n".join(rows)


def machine() -> dict:
    info = {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cpus": os.cpu_count(),
        "threads": torch.get_num_threads(),
    }
    if torch.cuda.is_available():
        info["cuda"] = torch.cuda.get_device_name(0)
    return info


@dataclass
class BenchOptions:
    """What ``tsm bench`` takes (each field an option: :mod:`tsm_apps.options`)."""

    quick: bool = field(default=False, **option("fewer repeats (under 5 minutes on 2 cores)"))
    out: str = field(default="runs/bench/bench.json", **option("JSON output"))
    device: str = field(
        default="auto",
        **option("auto: CPU, and CUDA when present; cpu; cuda", choices=("auto", "cpu", "cuda")),
    )
    official_online_demo: str = field(
        default="",
        **option(
            "path of the official online_demo/mobilenet_v2_tsm.py (a checkout of "
            "mit-han-lab/temporal-shift-module): also time its step against ours, by each route "
            "on both sides"
        ),
    )
    groups: list = field(
        default_factory=list,
        **option("only these figure groups (e.g. 'scaling')", positional=True, nargs="*"),
    )


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tsm bench", description=__doc__.splitlines()[0])
    return add_options(p, BenchOptions)


def main(argv: list[str]) -> int:
    a = options_from(BenchOptions, build_parser().parse_args(argv))
    if a.device == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda: no CUDA device is available")
    devices = ["cpu"] + (["cuda"] if a.device != "cpu" and torch.cuda.is_available() else [])
    if a.device == "cuda":
        devices = ["cuda"]
    t0 = time.perf_counter()
    known = [ep.name for ep in providers()]
    unknown = [g for g in a.groups if g not in known]
    if unknown:
        raise ValueError(f"unknown bench group(s) {unknown}; known: {known}")
    if a.official_online_demo:
        try:  # a wrong path fails before anything is timed
            load_demo(a.official_online_demo)
        except ValueError as e:
            raise ValueError(f"--official-online-demo {e}") from None
    figures = collect(a.quick, devices, tuple(a.groups))
    if a.official_online_demo:
        for device in devices:
            print(f"[bench] official online demo on {device}", flush=True)
            figures += demo_anchors(a.official_online_demo, device, 30 if a.quick else 300)
    report = {
        "machine": machine(),
        "quick": a.quick,
        "seconds": time.perf_counter() - t0,
        "figures": [f.to_dict() for f in figures],
    }
    out = atomic_write_json(Path(a.out), report)
    print(format_table(figures))
    print(f"[bench] {len(figures)} figures in {report['seconds']:.0f} s -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
