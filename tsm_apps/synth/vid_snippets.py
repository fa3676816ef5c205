"""One snippet of the synthetic ImageNet-VID: its objects, their tracks and blur, and its
corruptions (the TSM paper's figure-6 failure cases), drawn from one random stream.

Each snippet holds 1-3 objects of four real VID classes (``CLASSES``), each drawn with its own
look (:mod:`tsm_apps.synth.vid_objects`): airplane (grey fuselage and swept wings), car (red
body, cabin, black wheels), zebra (black-striped white body), watercraft (hull and white sails).
Every object follows a straight track that bounces off the frame's edges, at a speed drawn so
that its FGFA motion IoU (see :mod:`tsm_apps.data.motion`) falls in a chosen class
(``MOTION_TARGETS``, :func:`speed_for`); the classes cycle over the objects, so slow, medium and
fast objects are all present. Each object is blurred along its own motion as a camera shutter
blurs it: a streak of ``motion_blur`` x its speed (pixels per frame), centred on its box (the box
is where the object is at the frame's time): fast objects (2-5 pixels a frame at 160x128) are
smeared over 4-10 pixels, slow ones (under 0.25) are sharp. Corruptions, at most one per frame
(:mod:`tsm_apps.synth.vid_corruptions`):

* ``occlusion``: a dark vertical bar sweeps across the frame; an object whose box it covers by
  at least ``OCCLUDED_FRACTION`` has ``occluded`` = 1 in that frame's XML;
* ``glare``: a bright flash (a radial white-out) for 1-2 frames;
* ``blur``: camera-shake motion blur for 2-3 frames.

Every snippet gets two of the three kinds, rotating with its index. A snippet may also hold an
object seen in one frame only (motion IoU 0, "fast", as FGFA), from its own random stream. The
snippet ``index`` of ``split`` draws from ``np.random.default_rng([seed, STREAMS[split],
index])``. Boxes are inclusive pixel boxes ``(x1, y1, x2, y2)``; frames are uint8
``(T, H, W, 3)`` RGB.
"""

from __future__ import annotations

import numpy as np

from ..data.vid_layout import NAME_TO_WNID, VIDObject
from .draw import clutter
from .vid_corruptions import OCCLUDED_FRACTION, bar_columns, corrupt, schedule
from .vid_objects import draw_object, one_frame_object, paste_moving_object

CLASSES = ("airplane", "car", "zebra", "watercraft")
ASPECT = {"airplane": 1.6, "car": 1.7, "zebra": 1.4, "watercraft": 1.2}  # width / height
MOTION_TARGETS = {"slow": (0.93, 0.98), "medium": (0.75, 0.86), "fast": (0.3, 0.6)}
MOTION_BLUR = 2.0
"""Streak length over speed: the pixels an object moves in one frame, x 2 (a real shutter
smears at most one frame's travel; twice that makes the set's fast objects as hard to see as
fast objects are in real footage, at its small frame size). Swept on the val snippets (0, 1, 2:
docs/results.md section 4.10), no setting gave online TSM a fast-motion lead over TSN, so the
value is kept for the data, not for a figure."""
SPLITS = ("train", "val", "test")
STREAMS = {"train": 0, "val": 1, "test": 3}  # random streams [seed, stream, index]; 3 is also
# the DET images' (vid_objects.write_det): test snippet i and DET image i share a stream
ONE_FRAME_STREAMS = {"val": 2, "test": 4}  # ... of the one-frame objects


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
