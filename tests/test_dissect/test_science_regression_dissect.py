"""The science, guarded: where a recognizer looks. On the two motion pairs of the synthetic
temporal set (an "L" moving left to right / right to left / top to bottom / bottom to top,
beside 0-2 static distractors of the same look on a cluttered background; a class and its pair
differ only in the order of the frames), TSM's exact CAM puts its maximum on the moving actor
far more often than TSN's: the strict pointing game of :mod:`dissect.metrics`, scored as
``tsm dissect run --method cam`` scores it (the CAM of the predicted class of ``best.pth``,
bilinearly upsampled to the input, every frame with a box, the boxes mapped into the input's
pixels by ``dissect.clips``).

Reduced setting (``SETTING``): clips rendered in memory (no mp4), 8 frames at ``size`` px, the
first four classes, ``n_train`` train / ``n_val`` val clips, ResNet-18 at width 0.25 with
output stride 16 (as the demo's recognizers), the ``synthetic`` preset's optimiser for
``epochs`` epochs, training seed 0, one thread. The margin was measured with seeds (see the
comment above ``MARGIN``)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from dissect.cam import compute_cam
from dissect.clips import dissection_protocol
from dissect.metrics import clip_scores, summarise
from tsm_apps.checkpoint.reading import load_checkpoint
from tsm_apps.data.dataset import VideoDataset
from tsm_apps.data.pipeline import load_views
from tsm_apps.synth.temporal_clips import plan_clip, render_clip
from tsm_apps.train import load_config, train

FRAMES = 8
SETTING = dict(size=80, epochs=12, n_train=192, n_val=96, classes=4)


def make_clips(n: int, offset: int, size: int, classes: int) -> tuple:
    """``n`` clips of the first ``classes`` classes: uint8 ``(n, T, S, S, 3)``, labels, actor
    boxes ``(n, T, 4)`` (NaN rows where the actor is invisible), the clips' plans."""
    videos, labels, boxes, plans = [], [], [], []
    for i in range(n):
        label = i % classes  # a pair (2k, 2k + 1) shares the plan, played backwards
        plan = plan_clip(7, offset + i // classes, FRAMES, size, label=label)
        videos.append(render_clip(plan, size))
        labels.append(label)
        boxes.append([b if b is not None else [np.nan] * 4 for b in plan.boxes(size)])
        plans.append(plan)
    return torch.from_numpy(np.stack(videos)), labels, np.asarray(boxes, np.float64), plans


def actor_pixels(plan, size: int) -> np.ndarray:
    """uint8 ``(T, S, S, 3)``: 255 where the rendered clip differs from the same clip rendered
    without its actor (the actor's pixels), else 0."""
    bare = dataclasses.replace(plan, states=plan.states * np.array([1, 1, 1, 1, 0]))
    moved = np.abs(render_clip(plan, size).astype(np.int16) - render_clip(bare, size)).sum(-1)
    return np.repeat(np.where(moved > 0, 255, 0).astype(np.uint8)[..., None], 3, axis=-1)


def input_boxes(views, clip_boxes: np.ndarray, mapped: bool = True) -> np.ndarray:
    """The boxes ``(T, 4)`` scored on the frames ``views`` shows: ``clip_boxes`` (every frame of
    the clip, the rendered frame's pixels) at the sampled frames, mapped into the input's pixels
    as ``dissect.clips.load_clip`` maps them (:meth:`~tsm_apps.data.pipeline.ClipViews.to_input`;
    ``mapped=False``: as rendered, only to measure what the mapping changes)."""
    shown = clip_boxes[views.indices[0]]
    return views.to_input(shown) if mapped else shown


def actor_coverage(
    val: VideoDataset, boxes: np.ndarray, plans: list, size: int, mapped: bool = True
) -> float:
    """The fraction of the actor's pixels in the model input (its pixels rendered as the clip
    and sent through the same resize and crop, then > 127) whose centres lie in the boxes the
    pointing game scores: an independent check that the boxes sit where the model sees the
    actor."""
    proto = dissection_protocol(val.protocol)
    inside = total = 0
    for i, plan in enumerate(plans):
        views = load_views(val.records[i], proto, FRAMES, frames=actor_pixels(plan, size))
        shown = input_boxes(views, boxes[i], mapped)
        for mask, (x0, y0, x1, y1) in zip(views.frames[0][..., 0] > 127, shown):
            ys, xs = np.nonzero(mask)
            if np.isnan(x0) or not len(xs):
                continue
            cx, cy = xs + 0.5, ys + 0.5
            inside += int(((cx >= x0) & (cx <= x1) & (cy >= y0) & (cy <= y1)).sum())
            total += len(xs)
    return inside / total


def pointing(model, val: VideoDataset, boxes: np.ndarray, mapped: bool = True) -> float:
    """Strict pointing over every val frame with a box: the maximum of the predicted class's
    CAM (at input resolution) lies on the actor's box. Each clip is the view ``tsm dissect run``
    explains (:func:`dissect.clips.dissection_protocol` of the validation protocol: shorter side
    to ``size * 256 // 224``, centre crop ``size``), its boxes those of :func:`input_boxes`."""
    model.eval()
    proto = dissection_protocol(val.protocol)
    records = []
    for i in range(len(val)):
        views = load_views(val.records[i], proto, FRAMES, frames=val.frames[i])
        maps = compute_cam(model, views.input).maps[0].numpy()
        records.append(clip_scores(maps, input_boxes(views, boxes[i], mapped), None, {}))
    return summarise(records)["pointing"]


def run(
    shift: str, seed: int, tmp, size: int, epochs: int, n_train: int, n_val: int, classes: int
) -> tuple:
    """``(best val top-1 %, best.pth, the val set, its boxes)`` of a recognizer with ``shift``."""
    tv, tl, *_ = make_clips(n_train, 0, size, classes)
    vv, vl, vb, _ = make_clips(n_val, 1000, size, classes)
    work = tmp / f"{shift}{seed}_{size}_{epochs}_{n_train}_{classes}"
    cfg = load_config(
        work_dir=str(work),
        arch="resnet18",
        width=0.25,
        segments=FRAMES,
        size=size,
        shift=shift,
        output_stride=16,
        epochs=epochs,
        batch_size=16,
        optimizer="adam",
        lr_per_8=0.001,
        warmup_epochs=1.0,
        dropout=0.5,
        seed=seed,
        progress=False,
        tensorboard=False,
    )
    tr = VideoDataset.from_tensor(tv, tl, True, FRAMES, size, seed=seed)
    va = VideoDataset.from_tensor(vv, vl, False, FRAMES, size)
    top1 = train(cfg, tr, va, classes)["best_top1"]
    return top1, load_checkpoint(work / "best.pth"), va, vb


# measured with the boxes mapped into the input, at commit b0b0df4 (OMP_NUM_THREADS=1
# .venv/bin/python tests/test_dissect/test_science_regression_dissect.py 0 1 2 3; 2 shared cores
# at load average 7-17, 423-1122 s a model), strict pointing TSM / TSN (best val top-1 TSM / TSN;
# in brackets the lead with the rendered frame's boxes, as this guard scored before):
#   seed 0: 0.592 / 0.221 = +0.371 (100% / 34%) [+0.357]
#   seed 1: 0.543 / 0.359 = +0.184 (100% / 38%) [+0.194]
#   seed 2: 0.591 / 0.438 = +0.153 (100% / 39%) [+0.181]
#   seed 3: 0.600 / 0.310 = +0.290 (100% / 38%) [+0.292]
# MARGIN stays below the smallest lead (+0.153, seed 2).
# Not reliable with an earlier clip pipeline, so not used: the left/right pair alone (TSN at
# chance, so its CAM lands anywhere: at 64 px TSM - TSN +0.20 / +0.20 / +0.27 / -0.13 for seeds
# 0-3, at 96 px +0.21 / -0.02 / +0.06 / +0.18), and four classes at 64 px (+0.09 / +0.30, TSM
# under the centre prior). At 96 px (12 epochs, rendered-frame boxes) TSM pointed better (seed 0:
# 0.783 / 0.211) at twice the cost.
MARGIN = 0.15


# the actor's pixels in the input that lie in the scored boxes, the 96 val clips at 80 px
# (python tests/test_dissect/test_science_regression_dissect.py --coverage): 0.9989 with the
# boxes mapped into the input, 0.8901 with the rendered frame's boxes (up to 5.5 px off)
COVERAGE = 0.99


def test_the_guard_scores_boxes_where_the_model_sees_the_actor():
    size = SETTING["size"]
    vv, vl, vb, plans = make_clips(SETTING["n_val"], 1000, size, SETTING["classes"])
    val = VideoDataset.from_tensor(vv, vl, False, FRAMES, size)
    assert actor_coverage(val, vb, plans, size) >= COVERAGE


@pytest.mark.slow
def test_tsm_points_at_the_actor_more_than_tsn(tmp_path):
    torch.set_num_threads(1)
    tsm, tsn = (pointing(*run(s, 0, tmp_path, **SETTING)[1:]) for s in ("offline", "none"))
    assert tsm - tsn >= MARGIN, (tsm, tsn)


if __name__ == "__main__":
    import argparse
    import tempfile
    import time
    from pathlib import Path

    p = argparse.ArgumentParser(description="re-measure the margin: seeds, and the setting")
    p.add_argument("seeds", nargs="*", type=int, default=[0])
    p.add_argument("--coverage", action="store_true", help="only the boxes' actor coverage")
    for k, v in SETTING.items():
        p.add_argument(f"--{k.replace('_', '-')}", type=int, default=v)
    a = p.parse_args()
    setting = {k: getattr(a, k) for k in SETTING}
    torch.set_num_threads(1)
    if a.coverage:
        vv, vl, vb, plans = make_clips(a.n_val, 1000, a.size, a.classes)
        val = VideoDataset.from_tensor(vv, vl, False, FRAMES, a.size)
        print(
            f"COVERAGE mapped {actor_coverage(val, vb, plans, a.size):.4f}, as rendered "
            f"{actor_coverage(val, vb, plans, a.size, False):.4f}"
        )
        raise SystemExit(0)
    with tempfile.TemporaryDirectory() as d:
        for seed in a.seeds:
            for shift in ("offline", "none"):
                t0 = time.time()
                top1, model, val, boxes = run(shift, seed, Path(d), **setting)
                pt, raw = pointing(model, val, boxes), pointing(model, val, boxes, False)
                print(
                    f"RESULT {setting} seed {seed} {shift}: best val top-1 {top1:.1f}% "
                    f"strict pointing {pt:.3f} (boxes not mapped: {raw:.3f}) in "
                    f"{time.time() - t0:.0f} s",
                    flush=True,
                )
