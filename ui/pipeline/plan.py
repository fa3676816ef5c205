"""The demo's plan: every step of ``tsm demo`` (each a ``tsm`` sub-command with the files it
writes and the steps it waits for) and the settings the steps run with: data sets, recognizers
(trained, tested, dissected) and R-FCN detectors (trained, tested) for each training seed, the
first seed's dissection comparison and, with ``--extras``, the online TSM, early recognition
and ``tsm bench --quick``.
"""

from __future__ import annotations

from pathlib import Path

from ..runs.layout import MODELS, RunLayout
from .steps import Step

DETECT_CONFIGS = {"tsn": "rfcn_synth_tsn", "tsm": "rfcn_synth_tsm"}  # bundled with detection
SHIFT = {"tsn": "none", "tsm": "offline"}
ONLINE = "tsm_online"  # --extras: the online TSM's folder under recognizers/
ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
SEEDS = 3
"""Training seeds per model: every comparison is reported as mean [min-max over seeds] and with
its paired-bootstrap interval over the test items (the same resamples for every seed)."""
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
