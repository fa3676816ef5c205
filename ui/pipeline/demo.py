"""``make demo`` / ``tsm demo``: the main job, end to end, on data the suite generates.

Steps (each a ``tsm`` sub-command, skipped when its outputs exist, so a re-run reuses them):
synthetic temporal + ImageNet-VID sets -> TSN and TSM recognizers -> TSN and online-TSM R-FCN
detectors (train, test) -> dissection of both recognizers and their comparison -> REPORT.md and
REPORT.html -> the UI on localhost. Steps of the two models run side by side, one thread each.
"""
from __future__ import annotations

import argparse
import subprocess
import time
from pathlib import Path

from tsm_apps.io import atomic_write_json, read_json

from .layout import DEFAULT_ROOT, MODELS, RunLayout
from .report import DET_KEYS, write_report
from .steps import Step, merge_timing, run_steps

DETECT_CONFIGS = {"tsn": "rfcn_synth_tsn", "tsm": "rfcn_synth_tsm"}  # bundled with detection
SHIFT = {"tsn": "none", "tsm": "offline"}
ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
OUTPUT_STRIDE = 16
"""The demo's recognizers keep res5 at stride 16 (dilated): 7x7 CAMs of a 112-px clip instead
of 4x4, at the same parameters and 3-15% more training time (docs/results.md, Dissection)."""


def plan(root: Path, seed: int = 0) -> list:
    """The demo's stages: lists of :class:`Step` that run side by side."""
    runs = RunLayout(root)
    data_t, data_v = runs.data_temporal, runs.data_vid
    synth = [
        Step("synth temporal", ["synth", "temporal", "--out", data_t, "--seed", seed],
             [data_t / "val.txt", data_t / "annotations.json"], ONE_THREAD),
        Step("synth vid", ["synth", "vid", "--out", data_v, "--seed", seed],
             [data_v / "ImageSets" / "VID" / "val.txt", data_v / "corruptions.json"], ONE_THREAD),
    ]
    train = [Step(f"train {m}", ["train", "--data", data_t, "--preset", "synthetic",
                                 "--shift", SHIFT[m], "--output-stride", OUTPUT_STRIDE,
                                 "--seed", seed, "--out", runs.recognizer(m)],
                  [runs.recognizer(m) / "best.pth", runs.recognizer_eval(m)], ONE_THREAD)
             for m in MODELS]
    test = [Step(f"test {m}", ["test", runs.recognizer(m) / "best.pth", "--data",
                               data_t / "test.txt", "--no-progress", "--out",
                               runs.recognizer_test(m)],
                 [runs.recognizer_test(m)], ONE_THREAD) for m in MODELS]
    det_train = [Step(f"detect train {m}", ["detect", "train", DETECT_CONFIGS[m], "--work-dir",
                                            runs.detector(m), "--cfg-options",
                                            f"data_root={data_v}/"],
                      [runs.detector(m) / "final.pth"], ONE_THREAD) for m in MODELS]
    det_test = [Step(f"detect test {m}", ["detect", "test", DETECT_CONFIGS[m],
                                          runs.detector(m) / "final.pth", "--out",
                                          runs.detector(m) / "test" / "results.json",
                                          "--cfg-options", f"data_root={data_v}/"],
                     [runs.detection_metrics(m)], ONE_THREAD) for m in MODELS]
    dissect = [Step(f"dissect {m}", ["dissect", "run", "--checkpoint",
                                     runs.recognizer(m) / "best.pth", "--data", data_t, "--method",
                                     "cam", "--out", runs.dissection(m)],
                    [runs.dissection(m) / "metrics.json"], ONE_THREAD) for m in MODELS]
    compare = Step("dissect compare", ["dissect", "compare", runs.dissection("tsm"),
                                       runs.dissection("tsn"), "--out", runs.comparison],
                   [runs.comparison / "compare.html"])
    return [synth, train, test, det_train, det_test, dissect, compare]


def summary(root: Path) -> list:
    """The headline numbers, one line each, from the run's JSON files."""
    lines, runs = [], RunLayout(root)
    for m in MODELS:
        ev = read_json(runs.recognizer_eval(m), missing_ok=True)
        if ev:
            lines.append(f"{m.upper()} recognizer: val top-1 {ev['top1']:.1f}%")
        held_out = read_json(runs.recognizer_test(m), missing_ok=True)
        if held_out and held_out.get("top1") is not None:  # best.pth was chosen on val
            lines.append(f"{m.upper()} recognizer: held-out test top-1 {held_out['top1']:.1f}%")
    for m in MODELS:
        met = read_json(runs.detection_metrics(m), missing_ok=True)
        if met:
            vals = ", ".join(f"{k} {met[k]:.1f}" for k in DET_KEYS if met.get(k) is not None)
            lines.append(f"{m.upper()} R-FCN: {vals}")
    return lines


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tsm demo", description=__doc__.splitlines()[0])
    p.add_argument("--out", default=str(DEFAULT_ROOT), help="run folder (default %(default)s)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-ui", action="store_true", help="stop after the report")
    p.add_argument("--port", type=int, default=8501, help="UI port (default 8501)")
    return p


def main(argv: list[str]) -> int:
    a = build_parser().parse_args(argv)
    root = Path(a.out)
    root.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    runs = RunLayout(root)
    timing = run_steps(plan(root, a.seed), log_dir=runs.logs)
    timing = merge_timing(read_json(runs.timing, missing_ok=True) or {}, timing)
    atomic_write_json(runs.timing, timing)
    md, page = write_report(root)
    print(f"[demo] finished in {time.perf_counter() - t0:.0f} s; report: {md} and {page}")
    for line in summary(root):
        print(f"[demo]   {line}")
    if a.no_ui:
        return 0
    ui = Step("ui", ["ui", "--runs", root, "--port", a.port], [])  # foreground until Ctrl-C
    print(f"[demo] starting the UI: http://localhost:{a.port}  (Ctrl-C to stop)", flush=True)
    try:
        return subprocess.run(ui.command()).returncode
    except KeyboardInterrupt:
        return 0
