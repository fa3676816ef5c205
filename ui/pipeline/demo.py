"""``make demo`` / ``tsm demo``: the main job, end to end, on data the suite generates.

Steps (each a ``tsm`` sub-command, skipped when its outputs exist, so a re-run reuses them):
synthetic temporal + ImageNet-VID sets -> for each training seed: TSN and TSM recognizers
(trained, then scored on the held-out test split), TSN and online-TSM R-FCN detectors (train,
test), dissection of both recognizers on the held-out test clips -> the first seed's dissection
comparison -> REPORT.md and REPORT.html (each comparison as mean [min, max] over the seeds) ->
the UI on localhost. Steps run side by side, one thread each, as many as there are CPUs.
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

from .layout import DEFAULT_ROOT, MODELS, RunLayout
from .report import write_report
from .seeds import headline, spreads, write_seeds
from .steps import Step, merge_timing, run_steps

DETECT_CONFIGS = {"tsn": "rfcn_synth_tsn", "tsm": "rfcn_synth_tsm"}  # bundled with detection
SHIFT = {"tsn": "none", "tsm": "offline"}
ONLINE = "tsm_online"  # --extras: the online TSM's folder under recognizers/
ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
SEEDS = 3
"""Training seeds per model: every comparison is reported as mean [min, max] over them."""
OUTPUT_STRIDE = 16
"""The demo's recognizers keep res5 at stride 16 (dilated): 7x7 CAMs of a 112-px clip instead
of 4x4, at the same parameters and 3-15% more training time (docs/results.md, Dissection)."""
EPOCHS = 15
"""Recognizer epochs (the ``synthetic`` preset has 20): three quarters of the cost per seed, so
that three seeds fit the demo's time (docs/results.md, Demo headline)."""
VAL_SNIPPETS = 16
"""Synthetic VID val and test snippets each (``tsm synth vid`` makes 8): twice the corrupted
frames, so the hard-frame mAP moves less with one detection (the detection science guard's set).
The detectors are scored on the held-out test snippets; val is where settings are chosen."""
DETECT_TEST_LIST = "ImageSets/VID/test.txt"
DETECTION_SEED_OFFSET = 4
"""The detectors of training seed ``k`` train with seed ``k + 4``: the detection setting (900
iterations of one clip) was chosen on seeds 0-3, so the demo's figures come from seeds that took
no part in choosing it (4-6 by default)."""


def _data_steps(runs: RunLayout, seed: int) -> list:
    data_t, data_v = runs.data_temporal, runs.data_vid
    return [
        Step(
            "synth temporal",
            ["synth", "temporal", "--out", data_t, "--seed", seed, "--no-progress"],
            [data_t / "test.txt", data_t / "annotations.json"],
            ONE_THREAD,
        ),
        Step(
            "synth vid",
            [
                "synth",
                "vid",
                "--out",
                data_v,
                "--seed",
                seed,
                "--val-videos",
                VAL_SNIPPETS,
                "--no-progress",
            ],
            [data_v / "ImageSets" / "VID" / "test.txt", data_v / "corruptions.json"],
            ONE_THREAD,
        ),
    ]


def _train_step(
    runs: RunLayout, data: RunLayout, name: str, folder: str, shift: str, seed: int
) -> Step:
    return Step(
        name,
        [
            "train",
            "--data",
            data.data_temporal,
            "--preset",
            "synthetic",
            "--shift",
            shift,
            "--output-stride",
            OUTPUT_STRIDE,
            "--epochs",
            EPOCHS,
            "--seed",
            seed,
            "--no-progress",
            "--out",
            runs.recognizer(folder),
        ],
        [runs.recognizer(folder) / "best.pth", runs.recognizer_eval(folder)],
        ONE_THREAD,
        needs=["synth temporal"],
    )


def _recognizer_steps(
    runs: RunLayout, data: RunLayout, m: str, seed: int, tag: str, first: bool
) -> list:
    """Train, test on the held-out split, dissect on it (the first seed's dissection with
    units, overlays and the randomised-weights check; the others' the metrics only)."""
    best, test_list = runs.recognizer(m) / "best.pth", data.data_temporal / "test.txt"
    extra = [] if first else ["--no-units", "--no-overlays", "--no-sanity"]
    return [
        _train_step(runs, data, f"train {m}{tag}", m, SHIFT[m], seed),
        Step(
            f"test {m}{tag}",
            ["test", best, "--data", test_list, "--no-progress", "--out", runs.recognizer_test(m)],
            [runs.recognizer_test(m)],
            ONE_THREAD,
            needs=[f"train {m}{tag}"],
        ),
        Step(
            f"dissect {m}{tag}",
            [
                "dissect",
                "run",
                "--checkpoint",
                best,
                "--data",
                test_list,
                "--method",
                "cam",
                "--no-progress",
                *extra,
                "--out",
                runs.dissection(m),
            ],
            [runs.dissection(m) / "metrics.json"],
            ONE_THREAD,
            needs=[f"train {m}{tag}"],
        ),
    ]


def _extra_steps(runs: RunLayout, seed: int, before: list) -> list:
    """``--extras``: an online TSM (first seed) and early recognition against TSM and TSN on
    the held-out clips, then ``tsm bench --quick`` alone after every other step."""
    online, best = runs.recognizer(ONLINE), {m: runs.recognizer(m) / "best.pth" for m in MODELS}
    return [
        _train_step(runs, runs, "train tsm online", ONLINE, "online", seed),
        Step(
            "early recognition",
            [
                "test",
                online / "best.pth",
                "--online",
                "--offline-checkpoint",
                best["tsm"],
                "--tsn-checkpoint",
                best["tsn"],
                "--data",
                runs.data_temporal / "test.txt",
                "--no-progress",
                "--out",
                runs.early_csv.parent,
            ],
            [runs.early_csv],
            ONE_THREAD,
            needs=["train tsm online", "train tsm", "train tsn"],
        ),
        Step(
            "bench",
            ["bench", "--quick", "--out", runs.bench],
            [runs.bench],
            needs=[*before, "train tsm online", "early recognition"],
        ),
    ]


def _detector_steps(runs: RunLayout, data: RunLayout, m: str, seed: int, tag: str) -> list:
    """Train with seed ``seed + DETECTION_SEED_OFFSET``; test on the held-out test snippets."""
    opts = ["--cfg-options", f"data_root={data.data_vid}/"]
    final = runs.detector(m) / "final.pth"
    return [
        Step(
            f"detect train {m}{tag}",
            [
                "detect",
                "train",
                DETECT_CONFIGS[m],
                "--work-dir",
                runs.detector(m),
                *opts,
                f"randomness.seed={seed + DETECTION_SEED_OFFSET}",
            ],
            [final],
            ONE_THREAD,
            needs=["synth vid"],
        ),
        Step(
            f"detect test {m}{tag}",
            [
                "detect",
                "test",
                DETECT_CONFIGS[m],
                final,
                "--out",
                runs.detector(m) / "test" / "results.json",
                *opts,
                f"test_dataloader.dataset.ann_file={DETECT_TEST_LIST}",
            ],
            [runs.detection_metrics(m)],
            ONE_THREAD,
            needs=[f"detect train {m}{tag}"],
        ),
    ]


def plan(root: Path, seed: int = 0, seeds: int = SEEDS, extras: bool = False) -> list:
    """The demo's steps in priority order (each waits for its ``needs``): data from ``seed``,
    training seeds ``seed .. seed + seeds - 1``, the first seed's runs at the root;
    ``extras``: :func:`_extra_steps` too."""
    runs = RunLayout(root)
    steps = _data_steps(runs, seed)
    first_dissections = []
    for k in range(seed, seed + seeds):
        first = k == seed
        lay, tag = (runs, "") if first else (runs.seed_run(k), f" (seed {k})")
        for m in MODELS:
            rec = _recognizer_steps(lay, runs, m, k, tag, first)
            if first:  # the app opens the newest dissection of each model: the first seed's
                first_dissections.append(rec.pop())
            steps += rec + _detector_steps(lay, runs, m, k, tag)
    others = [s.name for s in steps if s.name.startswith("dissect ")]
    for s in first_dissections:
        s.needs = [*s.needs, *others]
    compare = Step(
        "dissect compare",
        [
            "dissect",
            "compare",
            runs.dissection("tsm"),
            runs.dissection("tsn"),
            "--out",
            runs.comparison,
        ],
        [runs.comparison / "compare.html"],
        needs=[s.name for s in first_dissections],
    )
    steps += first_dissections + [compare]
    return steps + (_extra_steps(runs, seed, [s.name for s in steps]) if extras else [])


def summary(root: Path) -> list:
    """The headline: each comparison as mean [min, max] over the seeds, one line each."""
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
        f"[demo] TSN and TSM over training seeds {a.seed}..{a.seed + a.seeds - 1}, mean [min, max]:"
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
