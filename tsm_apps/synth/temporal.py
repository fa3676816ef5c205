"""A synthetic temporal-reasoning set (Something-Something-like) that only temporal order solves.

Ten classes in five time-reversed pairs: moving left->right / right->left, top->bottom /
bottom->top, growing / shrinking, rotating clockwise / counter-clockwise, appearing / disappearing.
A clip of the second class of a pair is a clip of the first class played backwards (same sampling
of every parameter), so both classes have exactly the same distribution of single frames, and of
unordered sets of frames: an average-consensus TSN cannot tell them apart. Each clip shows one
acting "L" and 0-2 static distractors (drawn uniformly, the same for every class) of the same
colour and shape, on a cluttered random texture; only the motion tells which object acts and how.
Within a pair no single frame helps; across pairs the default ``path`` layout still lets a frame
hint at the family (distractors lie off the mover's axis, a scaling actor leaves their size range),
which the ``stage`` layout removes (see :func:`.temporal_clips.plan_clip`) at the cost of smaller
objects and shorter moves. The clips without a distractor give training a foothold: without them
a narrow TSM trained from scratch under the ``synthetic`` preset often stays at chance. One clip's
classes, plan and rendering live in :mod:`tsm_apps.synth.temporal_clips`; this module writes the
set.

Output under ``root`` (paths in the lists and JSON are relative to ``root``)::

    videos/%05d.mp4     lossless H.264, ``frames`` frames of ``size x size``
    train.txt, val.txt, test.txt  official TSM list format: ``videos/00012.mp4 16 2``
    classes.txt         class names, one a line, in label order
    annotations.json    {"classes": [...], "videos": {"videos/00012.mp4": {"label": 2,
                        "class": "...", "split": "train", "boxes": [[x1, y1, x2, y2] | null per
                        frame], "active": [bool per frame]}}}
    synth.json          the generation parameters (a re-run with the same ones resumes)

Boxes are integer edge coordinates (``x2 - x1`` = width) of the acting object in the stored frames,
``null`` where it is invisible; ``active`` marks the frames in which it moves, turns, grows or
fades. Video ``i`` has label ``i % 10``; the last ``test_fraction`` of the videos form the held-out
test split (reported figures), the ``val_fraction`` before them the val split (model selection);
val has at least 2 videos and test at least 2 when the set is large enough to leave a train clip
(at most all but one are held out). The defaults (720 videos, 1/6 and 1/6) keep the 480 train and
120 val clips of the earlier 600-video sets and add 120 test clips. Everything is a function of
``seed`` (video ``i`` draws from ``np.random.default_rng([seed, i])``), so the files are identical
for every worker count.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Optional

from ..io import atomic_write_text
from .draw import write_mp4
from .jobs import claim, run_jobs
from .temporal_clips import CLASSES, DISTRACTORS, check_layout, plan_clip, render_clip

VERSION = 1


def _video_job(job: tuple) -> tuple:
    root, index, frames, size, seed, fps, distractors, layout = job
    rel = f"videos/{index:05d}.mp4"
    plan = plan_clip(seed, index, frames, size, distractors=distractors, layout=layout)
    path = Path(root) / rel
    if not path.is_file():
        write_mp4(path, render_clip(plan, size), fps)
    return rel, plan.label, plan.boxes(size), [bool(a) for a in plan.active]


def _check(
    videos: int, frames: int, size: int, val_fraction: float, fps: int, test_fraction: float = 0.0
) -> None:
    checks = [
        (videos >= 2, f"videos must be >= 2 (one train and one val clip), got {videos}"),
        (frames >= 4, f"frames must be >= 4, got {frames}"),
        (size >= 32 and size % 2 == 0, f"size must be an even number >= 32, got {size}"),
        (0 < val_fraction < 1, f"val_fraction must be in (0, 1), got {val_fraction}"),
        (
            0 <= test_fraction < 1 - val_fraction,
            f"test_fraction must be in [0, 1 - val_fraction), got {test_fraction}",
        ),
        (fps >= 1, f"fps must be >= 1, got {fps}"),
    ]
    for ok, msg in checks:
        if not ok:
            raise ValueError(msg)


def generate(
    root: str | os.PathLike,
    videos: int = 720,
    frames: int = 16,
    size: int = 112,
    seed: int = 0,
    val_fraction: float = 1 / 6,
    fps: int = 8,
    test_fraction: float = 1 / 6,
    distractors: tuple = DISTRACTORS,
    layout: str = "path",
    workers: Optional[int] = None,
    progress: bool = False,
) -> Path:
    """Write the set under ``root`` (see the module docstring) and return ``root``.

    ``distractors``: ``(fewest, most)`` static distractors per clip, drawn uniformly; more
    make the set harder for every model (the default is what the ``synthetic`` training preset
    is tuned for). ``layout``: see :func:`plan_clip`.

    ``workers``: processes rendering and encoding videos (default: the CPU count); the output
    does not depend on it. A re-run with the same parameters skips the videos already written
    (each is written to a temporary name and renamed), so an interrupted run resumes."""
    _check(videos, frames, size, val_fraction, fps, test_fraction)
    distractors = tuple(int(d) for d in distractors)
    if len(distractors) != 2 or not 0 <= distractors[0] <= distractors[1] <= 4:
        raise ValueError(
            f"distractors must be (fewest, most) with 0 <= fewest <= most <= 4, got {distractors}"
        )
    check_layout(layout)
    root = Path(root)
    params = {
        "generator": "synth_temporal",
        "version": VERSION,
        "videos": videos,
        "frames": frames,
        "size": size,
        "seed": seed,
        "val_fraction": val_fraction,
        "fps": fps,
        "distractors": list(distractors),
    }
    if test_fraction:  # sets made before the test split existed keep resuming
        params["test_fraction"] = test_fraction
    if layout != "path":  # sets made before layouts existed keep resuming
        params["layout"] = layout
    claim(root, params)
    (root / "videos").mkdir(parents=True, exist_ok=True)
    jobs = [(str(root), i, frames, size, seed, fps, distractors, layout) for i in range(videos)]
    results = run_jobs(_video_job, jobs, workers, progress, "synth temporal")
    n_val, n_test = held_out(videos, val_fraction, test_fraction)
    lines = {"train": [], "val": [], "test": []}
    ann = {"classes": list(CLASSES), "videos": {}}
    for i, (rel, label, boxes, active) in enumerate(results):
        split = (
            "test" if i >= videos - n_test else "val" if i >= videos - n_test - n_val else "train"
        )
        lines[split].append(f"{rel} {frames} {label}\n")
        ann["videos"][rel] = {
            "label": label,
            "class": CLASSES[label],
            "split": split,
            "boxes": boxes,
            "active": active,
        }
    for split, rows in lines.items():
        atomic_write_text(root / f"{split}.txt", "".join(rows))
    atomic_write_text(root / "classes.txt", "".join(c + "\n" for c in CLASSES))
    atomic_write_text(root / "annotations.json", json.dumps(ann, sort_keys=True) + "\n")
    return root


def held_out(videos: int, val_fraction: float, test_fraction: float) -> tuple:
    """``(n_val, n_test)``: the last ``n_test`` videos are test, the ``n_val`` before them val."""
    n_val = min(videos - 1, max(2, round(videos * val_fraction)))
    n_test = 0
    if test_fraction > 0:
        n_test = min(videos - 1 - n_val, max(2, round(videos * test_fraction)))
    return n_val, max(n_test, 0)
