"""ImageNet-VID evaluation: its speed on random boxes, and its agreement with FGFA's code.

    python benchmarks/bench_vid_eval.py [--frames 2000] [--dets 100]
    python benchmarks/bench_vid_eval.py --fgfa PATH/imagenet_vid_eval_motion.py \\
        --results runs/.../test/results.json [--data-root DIR] [--metrics .../metrics.json]

The second form re-scores the ``results.json`` of ``tsm detect test`` with FGFA's
``vid_eval_motion`` (msracver/Flow-Guided-Feature-Aggregation, ``lib/dataset/``; Python 2 code,
loaded from the path given with a few mechanical Python 3 fixes in memory, never copied here)
and prints its mAP overall / slow / medium / fast beside ``metrics.json`` and beside our
:func:`detection.vid_eval.evaluate_vid` on the same file. FGFA's inputs are written to a
temporary folder: the val frame list in ``VID_val_videos.txt`` order, the motion IoU ``.mat`` of
those frames (computed by :mod:`tsm_apps.data.motion`, or ``--motion-mat`` FGFA's published
file) and the detections as FGFA's ``<frame id> <class> <score> x1 y1 x2 y2`` lines (inclusive
pixel boxes: ``x2 - 1``), every number written at full precision.
"""

import argparse
import re
import tempfile
import time
import types
from pathlib import Path

import numpy as np

from detection.records import FrameDetections, FrameTruth
from detection.vid_eval import evaluate_vid
from tsm_apps.data.motion import snippet_motion_iou, write_motion_iou_mat
from tsm_apps.data.vid_image_sets import read_list
from tsm_apps.data.vid_layout import VID_CLASSES, read_frame_xml
from tsm_apps.io import read_json

RANGES = {
    "mAP": [0.0, 1.0],
    "mAP_fast": [0.0, 0.7],
    "mAP_medium": [0.7, 0.9],
    "mAP_slow": [0.9, 1.0],
}


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


def speed(frames: int, k: int) -> None:
    dets, gt = make(frames, k, 30)
    t = time.perf_counter()
    m = evaluate_vid(dets, gt, [f"c{i}" for i in range(30)])
    dt = time.perf_counter() - t
    print(
        f"{frames} frames x {k} detections, 30 classes, all splits: {dt:.2f} s "
        f"({1000 * dt / frames:.2f} ms/frame); mAP {m['mAP']:.1f}"
    )


def load_fgfa(path: Path) -> types.ModuleType:
    """FGFA's ``imagenet_vid_eval_motion.py`` (Python 2) as a module: print statements (made
    assignments: their progress lines are not needed), ``cPickle`` and numpy's ragged
    ``np.array`` (object arrays in numpy >= 1.24) fixed."""
    src = Path(path).read_text()
    src = re.sub(r"^(\s*)print\s+(?!\()", r"\1_ = ", src, flags=re.M)
    src = src.replace("import cPickle", "import pickle as cPickle")
    src = src.replace("motion_iou = np.array([[", "motion_iou = _ragged([[")
    src = re.sub(
        r"np\.array\((tp_cell|fp_cell|obj_labels_cell|obj_confs_cell)\)", r"_ragged(\1)", src
    )
    mod = types.ModuleType("fgfa_vid_eval_motion")
    mod.__dict__["_ragged"] = _ragged
    exec(compile(src, str(path), "exec"), mod.__dict__)
    return mod


def _ragged(items: list) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def fgfa_inputs(results: dict, root: Path, tmp: Path, motion_mat: Path | None) -> tuple:
    """Write FGFA's image set, motion ``.mat`` and detection file; returns their paths."""
    lines, motion = [], []
    for entry, start, *_ in read_list(root / "ImageSets" / "VID_val_videos.txt"):
        snippet = entry.split("/", 1)[1]
        folder = root / "Annotations" / "VID" / "val" / snippet
        frames = [read_frame_xml(p) for p in sorted(folder.glob("*.xml"))]
        motion += snippet_motion_iou(frames)
        lines += [f"val/{snippet}/{t:06d} {start + t}" for t in range(len(frames))]
    ids = {ln.split()[0]: int(ln.split()[1]) for ln in lines}
    fgfa_label = {c: i + 1 for i, (wnid, name) in enumerate(VID_CLASSES) for c in (wnid, name)}
    det_lines = []
    for fr in results["frames"]:
        key = "val/" + str(Path(fr["img_path"]).with_suffix("")).split("/Data/VID/val/")[-1]
        for b, s, lab in zip(fr["boxes"], fr["scores"], fr["labels"]):
            x1, y1, x2, y2 = (float(v) for v in b)
            det_lines.append(
                f"{ids[key]} {fgfa_label[results['classes'][lab]]} {float(s)!r} "
                f"{x1!r} {y1!r} {x2 - 1!r} {y2 - 1!r}"
            )
    (tmp / "imageset.txt").write_text("\n".join(lines) + "\n")
    (tmp / "dets.txt").write_text("\n".join(det_lines) + "\n")
    if motion_mat is None:
        motion_mat = tmp / "motion_iou.mat"
        write_motion_iou_mat(motion_mat, motion)
    return tmp / "imageset.txt", tmp / "dets.txt", motion_mat


def ours_on_file(results: dict, root: Path) -> dict:
    """:func:`evaluate_vid` on ``results.json`` (what any evaluator re-scoring it sees)."""
    from detection.metric import AnnotationCache

    classes = results["classes"]
    paths = [fr["img_path"] for fr in results["frames"]]
    truths = AnnotationCache(classes).truths(paths)
    dets = {
        fr["img_path"]: FrameDetections(
            np.asarray(fr["boxes"], np.float64).reshape(-1, 4), fr["scores"], fr["labels"]
        )
        for fr in results["frames"]
    }
    return evaluate_vid(dets, truths, classes)


def compare(a: argparse.Namespace) -> None:
    results = read_json(a.results)
    root = (
        Path(a.data_root)
        if a.data_root
        else Path(results["frames"][0]["img_path"].split("/Data/VID/")[0])
    )
    fgfa = load_fgfa(Path(a.fgfa))
    classes_map = ["__background__"] + [w for w, _ in VID_CLASSES]
    with tempfile.TemporaryDirectory() as tmp:
        imageset, dets, mat = fgfa_inputs(results, root, Path(tmp), a.motion_mat)
        t = time.perf_counter()
        ap = fgfa.vid_eval_motion(
            False,
            str(dets),
            str(root / "Annotations" / "{0!s}.xml"),
            str(imageset),
            classes_map,
            str(Path(tmp) / "anno.pkl"),
            str(mat),
            list(RANGES.values()),
            [[0, 1e5 * 1e5]],
        )
        dt = time.perf_counter() - t
    theirs = {
        k: 100.0 * float(np.mean([v for v in ap[i][0] if v >= 0])) for i, k in enumerate(RANGES)
    }
    ours = ours_on_file(results, root)
    metrics = read_json(a.metrics or Path(a.results).parent / "metrics.json")
    print(
        f"FGFA vid_eval_motion on {a.results} ({len(results['frames'])} frames, "
        f"{sum(len(f['scores']) for f in results['frames'])} detections; {dt:.1f} s)"
    )
    print(
        "| split | metrics.json | FGFA on results.json | ours on results.json | "
        "FGFA - metrics.json |\n|---|---:|---:|---:|---:|"
    )
    for k in ("mAP", "mAP_slow", "mAP_medium", "mAP_fast"):
        m = metrics.get(k)
        diff = "-" if m is None else f"{theirs[k] - m:+.2e}"
        print(
            f"| {k} | {m if m is None else f'{m:.4f}'} | {theirs[k]:.4f} | "
            f"{ours[k] if ours[k] is None else f'{ours[k]:.4f}'} | {diff} |"
        )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--frames", type=int, default=2000)
    p.add_argument("--dets", type=int, default=100)
    p.add_argument("--fgfa", help="path of FGFA's lib/dataset/imagenet_vid_eval_motion.py")
    p.add_argument("--results", help="results.json of tsm detect test (with --fgfa)")
    p.add_argument("--metrics", help="its metrics.json (default: beside results.json)")
    p.add_argument("--data-root", help="the VID root (default: from the image paths)")
    p.add_argument("--motion-mat", type=Path, help="FGFA's motion IoU .mat instead of ours")
    a = p.parse_args()
    if a.fgfa:
        if not a.results:
            p.error("--fgfa needs --results")
        compare(a)
    else:
        speed(a.frames, a.dets)


if __name__ == "__main__":
    main()
