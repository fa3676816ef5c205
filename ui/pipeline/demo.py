"""``make demo`` / ``tsm demo``: the main job, end to end, on data the suite generates.

Steps (each a ``tsm`` sub-command, skipped when its outputs exist, so a re-run reuses them):
synthetic temporal + ImageNet-VID sets -> for each training seed: TSN and TSM recognizers
(trained, then scored on the held-out test split), TSN and online-TSM R-FCN detectors (train,
test), dissection of both recognizers on the held-out test clips -> the first seed's dissection
comparison -> REPORT.md and REPORT.html (each comparison as mean [min-max over seeds] and its
paired-bootstrap 95% interval over the test items, in intervals.json) ->
the UI on localhost. Steps run side by side, one thread each, as many as there are CPUs. The
steps and the settings they run with: :mod:`ui.pipeline.plan`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from tsm_apps.io import atomic_write_json, read_json
from tsm_apps.options import add_options, option, options_from

from ..runs.layout import DEFAULT_ROOT, RunLayout
from ..runs.seeds import headline, spreads, write_seeds
from .plan import DETECTION_SEED_OFFSET, SEEDS, plan
from .report import write_report
from .steps import Step, merge_timing, run_steps


def summary(root: Path) -> list:
    """The headline: each comparison as mean [min-max over seeds] and its paired-bootstrap
    95% interval, one line each."""
    return [headline(s) for s in spreads(root)]


def machine() -> dict:
    """The CPU model, the CPUs this process may use and the load average (1 min)."""
    model = ""
    try:
        model = next(
            (
                line.split(":", 1)[1].strip()
                for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")
            ),
            "",
        )
    except OSError:
        pass
    return {"cpu": model, "cpus": len(os.sched_getaffinity(0)), "load": os.getloadavg()[0]}


@dataclass
class DemoOptions:
    """What ``tsm demo`` takes (each field an option: :mod:`tsm_apps.options`)."""

    out: str = field(default=str(DEFAULT_ROOT), **option("run folder"))
    seed: int = field(default=0, **option("seed of the data sets and the first training seed"))
    seeds: int = field(default=SEEDS, **option("training seeds per model"))
    workers: Optional[int] = field(
        default=None,
        **option(
            "steps side by side, one thread each (default: the CPUs)", hidden_aliases=("--jobs",)
        ),
    )
    extras: bool = field(
        default=False,
        **option(
            "also an online TSM with early recognition, and tsm bench --quick (about 6 more "
            "minutes on 2 cores)"
        ),
    )
    ui: bool = field(default=True, **option("start the UI after the report"))
    port: int = field(default=8501, **option("UI port"))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tsm demo", description=__doc__.splitlines()[0])
    return add_options(p, DemoOptions)


def _record_timing(runs: RunLayout, timing: dict, wall: float, before: dict) -> None:
    """``timing.json``: each step's seconds, and the whole run's under ``demo`` (wall seconds,
    the CPU seconds of the steps that ran, the machine and its load before and after)."""
    timing = merge_timing(read_json(runs.timing, missing_ok=True) or {}, timing)
    cpu = sum(v["cpu_seconds"] or 0.0 for v in timing.values() if not v["reused"])
    timing["demo"] = {
        "seconds": wall,
        "cpu_seconds": cpu,
        "reused": False,
        **before,
        "load_after": os.getloadavg()[0],
    }
    atomic_write_json(runs.timing, timing)


def main(argv: list[str]) -> int:
    a = options_from(DemoOptions, build_parser().parse_args(argv))
    workers = len(os.sched_getaffinity(0)) if a.workers is None else a.workers
    if a.seeds < 1 or workers < 1:
        raise SystemExit("tsm demo: error: --seeds and --workers must be >= 1")
    root = Path(a.out)
    root.mkdir(parents=True, exist_ok=True)
    t0, before = time.perf_counter(), machine()
    runs = RunLayout(root)
    write_seeds(root, a.seed, range(a.seed, a.seed + a.seeds), DETECTION_SEED_OFFSET)
    timing = run_steps(plan(root, a.seed, a.seeds, a.extras), log_dir=runs.logs, workers=workers)
    _record_timing(runs, timing, time.perf_counter() - t0, before)
    md, page = write_report(root)
    print(
        f"[demo] finished in {time.perf_counter() - t0:.0f} s on {before['cpus']} CPUs "
        f"({before['cpu']}); report: {md} and {page}"
    )
    print(
        f"[demo] TSN and TSM over training seeds {a.seed}..{a.seed + a.seeds - 1}, mean "
        "[min-max over seeds], TSM - TSN paired-bootstrap 95% CI:"
    )
    for line in summary(root):
        print(f"[demo]   {line}")
    if not a.ui:
        return 0
    ui = Step("ui", ["ui", "--runs", root, "--port", a.port], [])  # foreground until Ctrl-C
    print(f"[demo] starting the UI: http://localhost:{a.port}  (Ctrl-C to stop)", flush=True)
    try:
        return subprocess.run(ui.command()).returncode
    except KeyboardInterrupt:
        return 0
