"""The paired bootstrap of the VID mAP at the demo's size: 2000 resamples of 16 test snippets
(384 frames), 3 training seeds x 2 models, every split, against recomputing evaluate_vid on the
resampled frames (goal: the bootstrap of every split in seconds).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_vid_bootstrap.py [--per-frame 50]
        [--resamples 2000] [--direct 3]

Random ground truth (1-2 boxes a frame, 4 classes, motion IoU, a third of the frames corrupted)
and ``--per-frame`` detections a frame around it (the demo's detectors keep up to 50). Prints,
per split, the seconds to match the frames once and to score the resamples, the interval, and
the seconds that ``--direct`` resamples take by evaluate_vid on copied frames (one call scores
every split), extrapolated to all resamples and runs, and the ratio.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

import numpy as np

from detection.records import FrameDetections, FrameTruth
from detection.vid_bootstrap import DetectorResults, map_statistic, run_metrics, snippet_items
from detection.vid_eval import evaluate_vid
from tsm_apps.evaluation.bootstrap import paired_bootstrap, resample_indices

SNIPPETS, FRAMES, CLASSES = 16, 24, ("a", "b", "c", "d")
KINDS = [None] * 6 + ["blur", "glare", "occlusion"]
SPLITS = ("mAP", "mAP_slow", "mAP_medium", "mAP_fast", "mAP_corrupted", "mAP_clean")
SPLITS += ("mAP_corrupted_blur", "mAP_corrupted_glare", "mAP_corrupted_occlusion")


def detector_run(seed: int, per_frame: int) -> DetectorResults:
    """One detector's results on the shared ground truth (drawn from seed 0)."""
    rng, gt_rng = np.random.default_rng(seed), np.random.default_rng(0)
    dets, truths = {}, {}
    for s in range(SNIPPETS):
        for t in range(FRAMES):
            key = f"/d/Data/VID/test/S{s:02d}/{t:06d}.JPEG"
            g = int(gt_rng.integers(1, 3))
            xy = gt_rng.uniform(0, 100, (g, 2))
            gt = np.concatenate([xy, xy + gt_rng.uniform(8, 40, (g, 2))], axis=1)
            truths[key] = FrameTruth(
                gt,
                gt_rng.integers(0, len(CLASSES), g),
                motion_iou=gt_rng.uniform(0.5, 1.0, g),
                corruption=KINDS[int(gt_rng.integers(0, len(KINDS)))],
            )
            boxes = gt[rng.integers(0, g, per_frame)] + rng.normal(0, 6, (per_frame, 4))
            boxes[:, 2:] = np.maximum(boxes[:, 2:], boxes[:, :2] + 1)
            scores, labels = rng.uniform(0, 1, per_frame), rng.integers(0, len(CLASSES), per_frame)
            dets[key] = FrameDetections(boxes, scores, labels)
    return DetectorResults(dets, truths, CLASSES)


def direct_seconds(run: DetectorResults, key: str, draws: np.ndarray) -> float:
    """Seconds per resample of evaluate_vid on the drawn snippets' frames, copies renamed."""
    names, items = snippet_items(run.ground_truth)
    frames = [[f for f in run.ground_truth if items[f] == i] for i in range(len(names))]
    t0 = time.perf_counter()
    for draw in draws:
        d2, t2 = {}, {}
        for j, i in enumerate(draw):
            for f in frames[i]:
                t2[f"{j}/{f}"], d2[f"{j}/{f}"] = run.ground_truth[f], run.detections[f]
        evaluate_vid(d2, t2, run.classes)[key]
    return (time.perf_counter() - t0) / len(draws)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--per-frame", type=int, default=50)
    p.add_argument("--resamples", type=int, default=2000)
    p.add_argument("--direct", type=int, default=3, help="resamples timed the direct way")
    a = p.parse_args(argv)
    runs = [[detector_run(s, a.per_frame) for s in seeds] for seeds in ((1, 2, 3), (4, 5, 6))]
    t0 = time.perf_counter()
    runs = [[replace(r, metrics=run_metrics(r)) for r in arm] for arm in runs]
    setup = time.perf_counter() - t0
    n_det = sum(len(d.scores) for d in runs[0][0].detections.values())
    print(
        f"{SNIPPETS * FRAMES} frames, {n_det} detections a run, 6 runs: evaluate_vid {setup:.1f} s"
    )
    total = setup
    for key in SPLITS:
        t0 = time.perf_counter()
        stat, names, figures = map_statistic(runs, key)
        t1 = time.perf_counter()
        point = float(np.mean([b - a for a, b in zip(*figures)]))
        ci = paired_bootstrap(stat, len(names), a.resamples, 0, point=point)
        t2 = time.perf_counter()
        total += t2 - t0
        print(
            f"{key}: matching {t1 - t0:.2f} s, {a.resamples} resamples {t2 - t1:.2f} s; "
            f"TSM - TSN {ci.point:+.2f}, 95% CI {ci.low:+.2f} to {ci.high:+.2f}"
        )
    per = direct_seconds(runs[0][0], "mAP", resample_indices(SNIPPETS, a.direct, 1))
    direct = per * a.resamples * 6  # one evaluate_vid call scores every split
    print(
        f"every split: {total:.1f} s; evaluate_vid on copied frames: {per:.2f} s a resample "
        f"and run (every split), {direct:.0f} s for {a.resamples} resamples x 6 runs "
        f"(ratio {direct / total:.0f})"
    )


if __name__ == "__main__":
    main()
