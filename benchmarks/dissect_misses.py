"""Where the maps' maxima land when they miss the actor, on the synthetic temporal set.

The set's annotations hold the actor's boxes only; the static distractors (identical in
appearance) are recomputed from the generator's own plans (``plan_clip`` is a function of the
seed and the video index, with the parameters in ``synth.json``). For every frame with a
visible actor, the first maximum of a run's stored map is on the actor (a strict pointing-game
hit), on a distractor, or on the background; background misses are summarised by their
distance to the actor's box. This tells "looks at the wrong object" (the TSN claim: objects,
not the action) from "looks at the actor, coarsely".

    .venv/bin/python benchmarks/dissect_misses.py runs/demo/dissect/tsn runs/demo/dissect/tsm

Prints one table row per run; ``--json FILE`` also writes the figures.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np

from dissect.layout import load_run
from dissect.metrics import has_box
from tsm_apps.io import atomic_write_json, read_json
from tsm_apps.synth.draw import L_SHAPE, bbox, place
from tsm_apps.synth.temporal_clips import plan_clip


def _inside(x: float, y: float, box) -> bool:
    return box[0] <= x <= box[2] and box[1] <= y <= box[3]


def _distance(x: float, y: float, box) -> float:
    dx = max(box[0] - x, x - box[2], 0.0)
    dy = max(box[1] - y, y - box[3], 0.0)
    return float(np.hypot(dx, dy))


def classify(run_dir: Path, data: Path | None = None) -> dict:
    """Counts of actor / distractor / background maxima over a run's frames with an actor."""
    run = load_run(run_dir)
    settings = read_json(run_dir / "run.json")["settings"]
    data = Path(data) if data else Path(settings["data"]).parent
    synth = read_json(data / "synth.json")
    if synth.get("generator") != "synth_temporal":
        raise ValueError(f"{data / 'synth.json'}: not a synthetic temporal set")
    size, frames = synth["size"], synth["frames"]
    on = {"actor": 0, "distractor": 0, "background": 0}
    far = []
    for cid, clip in sorted(run.clips.items()):
        arr = clip.load_maps()
        maps, boxes = arr["maps"], arr["boxes"]
        if maps.shape[1:] != (size, size):
            raise ValueError(
                f"{run_dir}: maps are {maps.shape[1:]}, the set's frames "
                f"{size}x{size}; run the dissection without --size"
            )
        index = int(re.search(r"(\d+)$", cid).group(1))
        plan = plan_clip(
            synth["seed"], index, frames, size, distractors=tuple(synth["distractors"])
        )
        others = [bbox(place(L_SHAPE, *d), size, size) for d in plan.distractors]
        planned = plan.boxes(size)
        expect = np.array(
            [planned[i] if planned[i] is not None else [np.nan] * 4 for i in arr["indices"]],
            np.float64,
        )
        if not np.allclose(expect, boxes, equal_nan=True):
            raise ValueError(
                f"{cid}: the generator's plan does not reproduce the stored actor "
                f"boxes (another generator version than {data / 'synth.json'}?)"
            )
        for t in np.flatnonzero(has_box(boxes)):
            y, x = np.unravel_index(int(maps[t].argmax()), maps[t].shape)
            cx, cy = x + 0.5, y + 0.5
            if _inside(cx, cy, boxes[t]):
                on["actor"] += 1
            elif any(_inside(cx, cy, b) for b in others):
                on["distractor"] += 1
            else:
                on["background"] += 1
                far.append(_distance(cx, cy, boxes[t]))
    n = sum(on.values())
    far = np.array(far)
    return {
        "run": str(run_dir),
        "frames": n,
        **{f"on_{k}": v / n for k, v in on.items()},
        "background_median_px": float(np.median(far)) if far.size else None,
        "background_within_7p5_px": float((far <= 7.5).mean()) if far.size else None,
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", nargs="+", type=Path, help="dissection run folders")
    p.add_argument("--data", type=Path, help="the synthetic set (default: from run.json)")
    p.add_argument("--json", type=Path, help="also write the figures here")
    a = p.parse_args()
    rows = [classify(r, a.data) for r in a.runs]
    print(
        "| run | frames | max on actor | on a distractor | on background | background: "
        "median px to actor box | background: within 7.5 px |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        med, near = r["background_median_px"], r["background_within_7p5_px"]
        print(
            f"| {r['run']} | {r['frames']} | {r['on_actor']:.3f} | {r['on_distractor']:.3f} | "
            f"{r['on_background']:.3f} | {'' if med is None else f'{med:.1f}'} | "
            f"{'' if near is None else f'{near:.3f}'} |"
        )
    if a.json:
        atomic_write_json(a.json, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
