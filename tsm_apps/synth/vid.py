"""A synthetic ImageNet-VID: the devkit's layout and XML, small frames, tracks of every speed,
and the TSM paper's figure-6 failure cases as per-frame corruptions.

What a snippet shows (1-3 objects of four VID classes on bouncing tracks of every motion class,
blurred along their motion, and two of three corruptions: occlusion, glare, camera shake) is
:mod:`tsm_apps.synth.vid_snippets`; this module writes the set. Every second val (and test)
snippet also holds an object seen in one frame only (motion IoU 0, "fast", as FGFA). Three
splits: train, val (to choose settings on) and a held-out test split (to report on); train and
val snippets draw from their own random streams, but the test split shares stream 3 with the
DET images (``write_det``: test snippet ``i`` and DET image ``i`` both start from
``np.random.default_rng([seed, 3, i])``, so they draw the same first numbers), kept so that the
demo's data and results stay as measured. Files under ``root``: ``Data/VID``, ``Annotations/VID``, ``ImageSets/VID``
(:mod:`tsm_apps.data.vid_layout`), the MSRA lists
``ImageSets/{VID_train_15frames,VID_val_videos,VID_test_videos,DET_train_30classes}.txt`` and a
DET part ``Data/DET``, ``Annotations/DET`` (:mod:`tsm_apps.synth.vid_objects`),
``corruptions.json`` = ``{"train": {snippet: {"<frame>": kind}}, "val": {...}, "test": {...}}``
(frame index from 0, as in the file names) and ``synth.json`` (parameters and motion-class
counts). The set is built in a temporary folder beside ``root`` and renamed into place, so
``root`` is complete or absent; everything is a function of ``seed``.
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
    annotation_path,
    frame_to_xml,
    image_path,
    train_snippet,
    val_snippet,
    vid_test_snippet,
)
from ..io import atomic_write_text, read_json
from ..progress import progress_bar
from .vid_objects import write_det
from .vid_snippets import CLASSES, MOTION_BLUR, SPLITS, render_snippet

VERSION = 3


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
