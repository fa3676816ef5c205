"""A synthetic ImageNet-VID: the devkit's layout and XML, small frames, tracks of every speed,
and the TSM paper's figure-6 failure cases as per-frame corruptions.

Each snippet holds 1-3 objects of four real VID classes, each drawn with its own look: airplane
(grey fuselage and swept wings), car (red body, cabin, black wheels), zebra (black-striped
white body), watercraft (hull and white sails). Every object follows a straight track that
bounces off the frame's edges, at a speed drawn so that its FGFA motion IoU (see
:mod:`tsm_apps.data.motion`) falls in a chosen class; the classes cycle over the objects, so
slow, medium and fast objects are all present. Each object is blurred along its own motion as a
camera shutter blurs it: a streak of ``motion_blur`` x its speed (pixels per frame), centred on
its box (the box is where the object is at the frame's time): fast objects (2-5 pixels a frame
at 160x128) are smeared over 4-10 pixels, slow ones (under 0.25) are sharp. Corruptions, at
most one per frame:

* ``occlusion``: a dark vertical bar sweeps across the frame; an object whose box it covers by
  at least ``OCCLUDED_FRACTION`` has ``occluded`` = 1 in that frame's XML;
* ``glare``: a bright flash (a radial white-out) for 1-2 frames;
* ``blur``: camera-shake motion blur for 2-3 frames.

Every snippet gets two of the three kinds, rotating with its index. Every second val (and test)
snippet also holds an object seen in one frame only (motion IoU 0, "fast", as FGFA). Three
splits: train, val (to choose settings on) and a held-out test split (to report on), each from
its own random stream. Files under ``root``: ``Data/VID``, ``Annotations/VID``, ``ImageSets/VID``
(:mod:`tsm_apps.data.vid_layout`), the MSRA lists
``ImageSets/{VID_train_15frames,VID_val_videos,VID_test_videos,DET_train_30classes}.txt`` and a
DET part ``Data/DET``, ``Annotations/DET`` (:mod:`tsm_apps.synth.vid_objects`),
``corruptions.json`` = ``{"train": {snippet: {"<frame>": kind}}, "val": {...}, "test": {...}}``
(frame index from 0, as in the file names) and ``synth.json`` (parameters and motion-class
counts). The set is
built in a temporary folder beside ``root`` and renamed into place, so ``root`` is complete or
absent; everything is a function of ``seed``.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np

from ..data.motion import count_motion_classes, snippet_motion_iou
from ..data.vid_image_sets import msra_lines, write_image_sets
from ..data.vid_layout import (
    FRAME_NAME,
    NAME_TO_WNID,
    VIDFrame,
    VIDObject,
    annotation_path,
    frame_to_xml,
    image_path,
    train_snippet,
    val_snippet,
    vid_test_snippet,
)
from ..io import atomic_write_text, read_json
from ..progress import progress_bar
from .draw import clutter
from .vid_corruptions import OCCLUDED_FRACTION, bar_columns, corrupt, schedule
from .vid_objects import draw_object, one_frame_object, paste_moving_object, write_det

CLASSES = ("airplane", "car", "zebra", "watercraft")
ASPECT = {"airplane": 1.6, "car": 1.7, "zebra": 1.4, "watercraft": 1.2}  # width / height
MOTION_TARGETS = {"slow": (0.93, 0.98), "medium": (0.75, 0.86), "fast": (0.3, 0.6)}
MOTION_BLUR = 2.0
"""Streak length over speed: the pixels an object moves in one frame, x 2 (a real shutter
smears at most one frame's travel; twice that makes the set's fast objects as hard to see as
fast objects are in real footage, at its small frame size)."""
SPLITS = ("train", "val", "test")
STREAMS = {"train": 0, "val": 1, "test": 3}  # random streams [seed, stream, index]
ONE_FRAME_STREAMS = {"val": 2, "test": 4}  # ... of the one-frame objects
VERSION = 3


def _shift_iou(w: float, h: float, dx: float, dy: float) -> float:
    inter = max(0.0, w - abs(dx)) * max(0.0, h - abs(dy))
    return inter / (2 * w * h - inter)


def speed_for(w: float, h: float, direction: float, target: float, window: int = 10) -> float:
    """Speed (pixels/frame) at which a ``w x h`` box moving straight along ``direction``
    (radians) has motion IoU ``target`` (mean IoU with itself shifted by ``k`` frames,
    ``k = 1..window``); bisection, the IoU falls as the speed grows."""
    c, s = np.cos(direction), np.sin(direction)
    lo, hi = 0.0, 2.0 * max(w, h)
    for _ in range(40):
        v = (lo + hi) / 2
        iou = np.mean([_shift_iou(w, h, v * k * c, v * k * s) for k in range(1, window + 1)])
        lo, hi = (v, hi) if iou > target else (lo, v)
    return (lo + hi) / 2


def _track(
    rng: np.random.Generator, frames: int, width: int, height: int, cls: str, speed_class: str
) -> np.ndarray:
    """Edge boxes ``(T, 4)`` of one object bouncing inside the frame."""
    h = rng.uniform(0.19, 0.34) * height
    w = min(h * ASPECT[cls], 0.6 * width)
    direction = rng.uniform(0, 2 * np.pi)
    v = speed_for(w, h, direction, rng.uniform(*MOTION_TARGETS[speed_class]))
    vel = np.array([np.cos(direction), np.sin(direction)]) * v
    pos = np.array([rng.uniform(0, width - w), rng.uniform(0, height - h)])
    hi = np.array([width - w, height - h])
    out = np.empty((frames, 4))
    for t in range(frames):
        out[t] = [pos[0], pos[1], pos[0] + w, pos[1] + h]
        pos = pos + vel
        for d in range(2):  # reflect at the edges
            if pos[d] < 0 or pos[d] > hi[d]:
                pos[d] = -pos[d] if pos[d] < 0 else 2 * hi[d] - pos[d]
                vel[d] = -vel[d]
                pos[d] = float(np.clip(pos[d], 0, hi[d]))
    return out


def _inclusive(box: np.ndarray, width: int, height: int) -> tuple:
    x1, y1, x2, y2 = (int(round(v)) for v in box)
    return (max(0, x1), max(0, y1), min(width - 1, x2 - 1), min(height - 1, y2 - 1))


def _streak(track: np.ndarray, t: int, blur: float) -> tuple[float, float]:
    """``(dx, dy)``: ``blur`` x the box's motion per frame at frame ``t`` (central difference
    of its position, one-sided at the ends)."""
    a, b = max(t - 1, 0), min(t + 1, len(track) - 1)
    d = (track[b, :2] - track[a, :2]) / max(b - a, 1)
    return float(blur * d[0]), float(blur * d[1])


def render_snippet(
    seed: int,
    split: str,
    index: int,
    frames: int,
    width: int,
    height: int,
    one_frame: bool = False,
    motion_blur: float = MOTION_BLUR,
) -> tuple:
    """``(uint8 frames (T, H, W, 3), per-frame VIDObject lists, {frame: corruption})`` of one
    snippet; ``split`` and ``index`` pick its random stream; ``one_frame`` adds an object seen
    in a single frame (its own random stream, so the rest of the snippet is unchanged);
    ``motion_blur``: streak length over speed (0: every object sharp)."""
    from PIL import ImageDraw

    if split not in STREAMS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    rng = np.random.default_rng([seed, STREAMS[split], index])
    n_obj = int(rng.integers(1, 4))
    classes = [
        CLASSES[(index + k) % len(CLASSES)] if k == 0 else CLASSES[int(rng.integers(len(CLASSES)))]
        for k in range(n_obj)
    ]
    speeds = [("slow", "medium", "fast")[(index + k) % 3] for k in range(n_obj)]
    tracks = [_track(rng, frames, width, height, c, s) for c, s in zip(classes, speeds)]
    tones = rng.uniform(0, 1, n_obj)
    background = clutter(rng, width, height, items=14, contrast=0.6)
    plan = schedule(rng, index, frames)
    bar = bar_columns(rng, plan, width)
    single = (
        one_frame_object(
            seed, index, frames, width, height, CLASSES, ONE_FRAME_STREAMS.get(split, 2)
        )
        if one_frame
        else None
    )
    images, objects = [], []
    for t in range(frames):
        img = background.copy()
        frame_objects = []
        for k in range(n_obj):
            box = _inclusive(tracks[k][t], width, height)
            flip = (tracks[k][min(t + 1, frames - 1)][0] - tracks[k][max(t - 1, 0)][0]) < 0
            img = paste_moving_object(
                img, classes[k], box, flip, tones[k], _streak(tracks[k], t, motion_blur)
            )
            covered = 0.0
            if t in bar:
                x1, x2 = bar[t]
                cover = max(0, min(x2, box[2] + 1) - max(x1, box[0]))
                covered = cover / (box[2] - box[0] + 1)
            frame_objects.append(
                VIDObject(k, NAME_TO_WNID[classes[k]], box, int(covered >= OCCLUDED_FRACTION), 0)
            )
        draw = ImageDraw.Draw(img)
        if single is not None and t == single[0]:
            draw_object(draw, single[1], single[2], False, 0.5)
            frame_objects.append(VIDObject(n_obj, NAME_TO_WNID[single[1]], single[2]))
        if t in bar:
            draw.rectangle([bar[t][0], 0, bar[t][1] - 1, height - 1], fill=(55, 45, 40))
        arr = np.asarray(img, np.float64)
        if plan.get(t) in ("glare", "blur"):
            arr = corrupt(arr, plan[t], rng)
        images.append(np.clip(arr + 0.5, 0, 255).astype(np.uint8))
        objects.append(frame_objects)
    return np.stack(images), objects, plan


def _write_snippet(tmp: Path, split: str, snippet: str, images: np.ndarray, objects: list) -> list:
    from PIL import Image

    frames = []
    for t, (arr, objs) in enumerate(zip(images, objects)):
        name = FRAME_NAME.format(t)
        img, xml = (
            at(tmp, "VID", split, f"{snippet}/{name}") for at in (image_path, annotation_path)
        )
        for folder in (img.parent, xml.parent):
            folder.mkdir(parents=True, exist_ok=True)
        Image.fromarray(arr).save(img, quality=92)
        frame = VIDFrame(snippet, name, arr.shape[1], arr.shape[0], objs)
        xml.write_bytes(frame_to_xml(frame))
        frames.append(frame)
    return frames


def _check(
    train_videos: int,
    val_videos: int,
    test_videos: int,
    frames: int,
    width: int,
    height: int,
    motion_blur: float,
) -> None:
    checks = [
        (train_videos >= 1, f"train_videos must be >= 1, got {train_videos}"),
        (val_videos >= 1, f"val_videos must be >= 1, got {val_videos}"),
        (test_videos >= 1, f"test_videos must be >= 1, got {test_videos}"),
        (motion_blur >= 0, f"motion_blur must be >= 0, got {motion_blur}"),
        (frames >= 12, f"frames must be >= 12 (room for the corruptions), got {frames}"),
        (width >= 64 and height >= 64, f"frames must be at least 64x64, got {width}x{height}"),
    ]
    for ok, msg in checks:
        if not ok:
            raise ValueError(msg)


def generate(
    root: str | os.PathLike,
    train_videos: int = 24,
    val_videos: int = 8,
    seed: int = 0,
    frames: int = 24,
    width: int = 160,
    height: int = 128,
    det_images: int = 12,
    one_frame_every: int = 2,
    progress: bool = False,
    test_videos: int | None = None,
    motion_blur: float = MOTION_BLUR,
) -> Path:
    """Write the set under ``root`` (see the module docstring) and return ``root``.

    ``det_images``: images of the DET part (0: none); ``one_frame_every``: every n-th val and
    test snippet (0: none) gets an object seen in one frame only; ``test_videos``: held-out
    test snippets (default: as many as ``val_videos``); ``motion_blur``: an object's streak
    length over its speed (0: objects sharp).

    ``root`` must be absent or empty, or hold a set made with the same parameters (then
    nothing is done)."""
    test_videos = val_videos if test_videos is None else test_videos
    _check(train_videos, val_videos, test_videos, frames, width, height, motion_blur)
    if det_images < 0 or one_frame_every < 0:
        raise ValueError(
            f"det_images and one_frame_every must be >= 0, got {det_images}, {one_frame_every}"
        )
    root = Path(root)
    params = {
        "generator": "synth_vid",
        "version": VERSION,
        "train_videos": train_videos,
        "val_videos": val_videos,
        "seed": seed,
        "frames": frames,
        "width": width,
        "height": height,
        "det_images": det_images,
        "one_frame_every": one_frame_every,
        "test_videos": test_videos,
        "motion_blur": float(motion_blur),
    }
    if _done(root, params):
        return root
    tmp = root.parent / f".{root.name}.partial-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        _build(tmp, params, progress)
        if root.is_dir():
            root.rmdir()  # empty (checked by _done)
        os.replace(tmp, root)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return root


def _done(root: Path, params: dict) -> bool:
    if not root.exists():
        return False
    if not root.is_dir():
        raise NotADirectoryError(f"{root} exists and is not a folder")
    manifest = root / "synth.json"
    if manifest.is_file():
        old = read_json(manifest)
        if {k: old.get(k) for k in params} == params:
            return True
        raise ValueError(
            f"{root} already holds a synthetic VID set made with other parameters "
            f"({ {k: old.get(k) for k in params} }); choose another --out"
        )
    if any(root.iterdir()):
        raise ValueError(f"{root} is not empty and holds no synth.json; choose an empty --out")
    return False


def _build(tmp: Path, params: dict, progress: bool) -> None:
    seed, t = params["seed"], params["frames"]
    jobs = [("train", i, train_snippet(i)) for i in range(params["train_videos"])]
    jobs += [("val", i, val_snippet(i)) for i in range(params["val_videos"])]
    jobs += [("test", i, vid_test_snippet(i)) for i in range(params["test_videos"])]
    jobs = progress_bar(jobs, desc="synth vid", unit="snippet", enabled=progress)
    train, held_out = {}, {"val": {}, "test": {}}
    corruptions = {s: {} for s in SPLITS}
    motion = {s: [] for s in SPLITS}
    every = params["one_frame_every"]
    for split, i, snippet in jobs:
        one = split != "train" and every > 0 and i % every == 0
        images, objects, plan = render_snippet(
            seed, split, i, t, params["width"], params["height"], one, params["motion_blur"]
        )
        frames = _write_snippet(tmp, split, snippet, images, objects)
        motion[split].append(snippet_motion_iou(frames))
        corruptions[split][snippet] = {str(f): k for f, k in sorted(plan.items())}
        if split == "train":
            train[snippet] = (t, {o.name for objs in objects for o in objs})
        else:
            held_out[split][snippet] = t
    write_image_sets(tmp, train, held_out["val"], held_out["test"])
    det = write_det(tmp, seed, params["det_images"], params["width"], params["height"], CLASSES)
    for name, lines in msra_lines(
        {s: n for s, (n, _) in train.items()}, held_out["val"], det, held_out["test"]
    ).items():
        (tmp / "ImageSets" / name).write_text("".join(line + "\n" for line in lines))
    atomic_write_text(tmp / "corruptions.json", json.dumps(corruptions, indent=1) + "\n")
    summary = dict(
        params,
        classes={c: NAME_TO_WNID[c] for c in CLASSES},
        motion_classes={s: dict(count_motion_classes(m)) for s, m in motion.items()},
    )
    atomic_write_text(tmp / "synth.json", json.dumps(summary, indent=1) + "\n")
