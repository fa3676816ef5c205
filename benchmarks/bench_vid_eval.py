"""Time of the ImageNet-VID evaluation (all splits) on random boxes: frames x detections.

    python benchmarks/bench_vid_eval.py [--frames 2000] [--dets 100]
"""
import argparse
import time

import numpy as np

from detection.vid_eval import FrameDetections, FrameTruth, evaluate_vid


def make(frames: int, k: int, classes: int, seed: int = 0) -> tuple[dict, dict]:
    """Random frames: 1-3 GT boxes each, ``k`` detections of which the first are noisy GT."""
    rng = np.random.default_rng(seed)
    gt, dets = {}, {}
    for f in range(frames):
        g = int(rng.integers(1, 4))
        xy, wh = rng.uniform(0, 400, (g, 2)), rng.uniform(10, 200, (g, 2))
        gb, gl = np.hstack([xy, xy + wh]), rng.integers(0, classes, g)
        gt[str(f)] = FrameTruth(gb, gl, motion_iou=rng.uniform(0.3, 1, g))
        xy, wh = rng.uniform(0, 400, (k - g, 2)), rng.uniform(10, 200, (k - g, 2))
        boxes = np.vstack([gb + rng.normal(0, 5, gb.shape), np.hstack([xy, xy + wh])])
        labels = np.concatenate([gl, rng.integers(0, classes, k - g)])
        dets[str(f)] = FrameDetections(boxes, rng.uniform(0, 1, k), labels)
    return dets, gt


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--frames", type=int, default=2000)
    p.add_argument("--dets", type=int, default=100)
    a = p.parse_args()
    dets, gt = make(a.frames, a.dets, 30)
    t = time.perf_counter()
    m = evaluate_vid(dets, gt, [f"c{i}" for i in range(30)])
    dt = time.perf_counter() - t
    print(f"{a.frames} frames x {a.dets} detections, 30 classes, all splits: {dt:.2f} s "
          f"({1000 * dt / a.frames:.2f} ms/frame); mAP {m['mAP']:.1f}")


if __name__ == "__main__":
    main()
