"""One clip of the synthetic temporal set: its classes, its plan and its rendering.

Ten classes in five time-reversed pairs (``CLASSES``; the pair's motion family is
``FAMILIES[label // 2]``). :func:`plan_clip` draws everything one clip is made of (a
:class:`ClipPlan`: the acting "L"'s state in every frame, the static distractors, the colour and
the background's seed) from ``np.random.default_rng([seed, index])``; an odd label's plan is the
even label's played backwards. :func:`render_clip` draws a plan as uint8 ``(T, H, W, 3)`` RGB
frames on a cluttered background. Two layouts (``LAYOUTS``): ``path`` keeps the distractors clear
of the actor's path; ``stage`` keeps the actor's path in a square the distractors stay out of.
Coordinates are pixel edges, angles clockwise in degrees (:mod:`tsm_apps.synth.draw`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from .draw import L_RADIUS, L_SHAPE, bbox, clutter, overlaps, place

CLASSES = (
    "moving left to right",
    "moving right to left",
    "moving top to bottom",
    "moving bottom to top",
    "growing",
    "shrinking",
    "rotating clockwise",
    "rotating counter-clockwise",
    "appearing",
    "disappearing",
)
FAMILIES = ("horizontal", "vertical", "scale", "rotate", "fade")  # label // 2
PALETTE = (
    (230, 40, 40),
    (40, 200, 60),
    (50, 90, 235),
    (240, 220, 40),
    (220, 50, 220),
    (40, 220, 230),
    (250, 140, 30),
    (245, 245, 245),
)
OUTLINE = (25, 25, 25)
SUPERSAMPLE = 2
DISTRACTORS = (0, 2)  # fewest and most static distractors per clip (default)
CLUTTER_ITEMS = 24  # bars, rings and blobs in the background
CLUTTER_CONTRAST = 0.5  # 1: full-range background colours; 0: flat grey
WINDOW_MIN = 0.85  # the actor moves during at least this fraction of the clip
ROTATION = (180, 240)  # degrees turned by a rotating actor
SIZE_SCALE = 1.3  # multiplies every object size
LAYOUTS = ("path", "stage")
STAGE = 0.62  # layout "stage": side of the actor's square, fraction of the frame
STAGE_SIDES = (0.15, 0.26)  # layout "stage": side range of every object, fraction of the frame


@dataclass
class ClipPlan:
    """Everything one clip is drawn from. ``states``: float ``(T, 5)`` per frame of the actor:
    centre x, centre y, side, angle (degrees, clockwise), opacity; ``distractors``: ``(K, 4)``
    static centre x, centre y, side, angle; ``active``: ``(T,)`` bool."""

    label: int
    states: np.ndarray
    active: np.ndarray
    distractors: np.ndarray
    colour: tuple
    background_seed: int

    def boxes(self, size: int) -> list:
        """Per frame the actor's integer edge box, ``None`` where it is fully transparent."""
        return [bbox(place(L_SHAPE, *s[:4]), size, size) if s[4] > 0 else None for s in self.states]


def _window(rng: np.random.Generator, frames: int, lo: float) -> tuple:
    """Start and length of the acting window: at least ``lo`` of the clip, at least 2 frames."""
    length = int(rng.integers(max(2, int(np.ceil(lo * frames))), frames + 1))
    return int(rng.integers(0, frames - length + 1)), length


def _actor(
    rng: np.random.Generator, family: str, frames: int, size: int, stage: Optional[tuple] = None
) -> tuple:
    """Forward-direction actor states ``(T, 5)`` and the active flags; inside ``stage``
    (``x, y, side`` of a square) when given, see :func:`_staged`."""
    t = np.arange(frames, dtype=np.float64)
    if family == "fade":
        start, length = (
            int(rng.integers(round(0.25 * frames), round(0.6 * frames) + 1)),
            int(rng.integers(2, 5)),
        )
        start = min(start, frames - length)
        alpha = np.clip((t - start + 1) / (length + 1), 0, 1)
    else:
        start, length = _window(rng, frames, WINDOW_MIN)
        alpha = np.ones(frames)
    p = np.clip((t - start) / max(length - 1, 1), 0, 1)
    active = (t >= start) & (t < start + length)
    if stage is not None:
        return _staged(rng, family, p, alpha, size, stage), active
    side = rng.uniform(0.22, 0.30) * size * np.ones(frames)
    angle = rng.uniform(0, 360) * np.ones(frames)
    if family == "scale":
        side = (rng.uniform(0.14, 0.18) + rng.uniform(0.20, 0.22) * p) * size
    if family == "rotate":
        side = rng.uniform(0.24, 0.32) * size * np.ones(frames)
        angle = angle + rng.uniform(*ROTATION) * p
    side = side * SIZE_SCALE
    margin = L_RADIUS * side.max() + 1
    cx = rng.uniform(margin, size - margin) * np.ones(frames)
    cy = rng.uniform(margin, size - margin) * np.ones(frames)
    if family in ("horizontal", "vertical"):
        room = size - 2 * margin
        dist = min(rng.uniform(0.45, 0.62) * size, room)
        start_pos = rng.uniform(margin, max(margin, size - margin - dist))
        pos = start_pos + dist * p
        if family == "horizontal":
            cx = pos
        else:
            cy = pos
    return np.stack([cx, cy, side, angle, alpha], 1), active


def _staged(
    rng: np.random.Generator, family: str, p: np.ndarray, alpha: np.ndarray, size: int, stage: tuple
) -> np.ndarray:
    """States ``(T, 5)`` of an actor whose whole path lies in the square ``stage``, drawn so
    that one frame looks alike for every family: the side is uniform over ``STAGE_SIDES``
    (a scaling actor sweeps that range), and the centre is uniform over the stage (a moving
    actor crosses the whole stage along its axis, at a uniform offset across it)."""
    frames = len(p)
    lo, hi = (f * size for f in STAGE_SIDES)
    side = rng.uniform(lo, hi) * np.ones(frames)
    angle = rng.uniform(0, 360) * np.ones(frames)
    if family == "scale":
        s0, s1 = rng.uniform(lo, lo + 0.1 * (hi - lo)), rng.uniform(hi - 0.1 * (hi - lo), hi)
        side = s0 + (s1 - s0) * p
    if family == "rotate":
        angle = angle + rng.uniform(*ROTATION) * p
    x0, y0, w = stage
    r = L_RADIUS * side.max() + 1
    cx, cy = (
        rng.uniform(x0 + r, x0 + w - r) * np.ones(frames),
        rng.uniform(y0 + r, y0 + w - r) * np.ones(frames),
    )
    if family == "horizontal":
        cx = x0 + r + (w - 2 * r) * p
    if family == "vertical":
        cy = y0 + r + (w - 2 * r) * p
    return np.stack([cx, cy, side, angle, alpha], 1)


def _distractors(
    rng: np.random.Generator, want: int, taken: list, size: int, sides: tuple, scale: float
) -> np.ndarray:
    """Up to ``want`` static objects of side ``sides`` x ``scale`` (fractions of ``size``)
    clear of the edge boxes ``taken`` and of each other (their own boxes at their own angles),
    ``(K, 4)``: centre x, centre y, side, angle."""
    placed, taken = [], list(taken)
    gap = max(1.0, size / 56)
    for _ in range(80):
        if len(placed) == want:
            break
        side = rng.uniform(*sides) * size * scale
        angle = rng.uniform(0, 360)
        half = np.abs(place(L_SHAPE, 0, 0, side, angle)).max(0) + 1
        if np.any(2 * half >= size):
            continue
        cx, cy = rng.uniform(half, size - half)
        box = [cx - half[0], cy - half[1], cx + half[0], cy + half[1]]
        if any(overlaps(box, b, gap) for b in taken):
            continue
        placed.append((cx, cy, side, angle))
        taken.append(box)
    return np.array(placed, np.float64).reshape(-1, 4)


def check_layout(layout: str) -> None:
    """Raise ValueError unless ``layout`` is one of ``LAYOUTS``."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")


def plan_clip(
    seed: int,
    index: int,
    frames: int,
    size: int,
    label: Optional[int] = None,
    distractors: tuple = DISTRACTORS,
    layout: str = "path",
) -> ClipPlan:
    """The plan of video ``index`` (label ``index % 10`` unless given). The random stream
    depends on ``(seed, index)`` only, and an odd label's plan is the even label's plan played
    backwards. The actor is redrawn until the drawn number of distractors fits beside it, so
    every class has the same distractor count distribution.

    ``layout``: ``"path"`` keeps the distractors clear of the actor's boxes in every frame;
    ``"stage"`` first draws a square of side ``STAGE`` (the same for every family), keeps the
    actor's whole path inside it and the distractors outside it, so that where the
    distractors lie tells nothing about the motion's axis."""
    check_layout(layout)
    rng = np.random.default_rng([seed, index])
    label = index % len(CLASSES) if label is None else int(label)
    if not 0 <= label < len(CLASSES):
        raise ValueError(f"label must be in 0..{len(CLASSES) - 1}, got {label}")
    want = int(rng.integers(distractors[0], distractors[1] + 1))
    for _ in range(100):
        if layout == "stage":
            w = STAGE * size
            stage = (*rng.uniform(0, size - w, 2), w)
            states, active = _actor(rng, FAMILIES[label // 2], frames, size, stage)
            taken = [[stage[0], stage[1], stage[0] + w, stage[1] + w]]
            sides, scale = STAGE_SIDES, 1.0
        else:
            states, active = _actor(rng, FAMILIES[label // 2], frames, size)
            taken = [bbox(place(L_SHAPE, *st[:4]), size, size) for st in states]
            sides, scale = (0.16, 0.34), SIZE_SCALE
        placed = _distractors(rng, want, taken, size, sides, scale)
        if len(placed) == want:
            break
    jitter = rng.integers(-15, 16, 3)
    colour = tuple(
        int(v) for v in np.clip(np.array(PALETTE[rng.integers(len(PALETTE))]) + jitter, 0, 255)
    )
    if label % 2:
        states, active = states[::-1].copy(), active[::-1].copy()
    return ClipPlan(label, states, active, placed, colour, int(rng.integers(2**31)))


def render_clip(plan: ClipPlan, size: int) -> np.ndarray:
    """The clip's frames, uint8 ``(T, size, size, 3)`` RGB (drawn at 2x, then box-filtered)."""
    from PIL import Image, ImageDraw

    k = SUPERSAMPLE
    big = size * k
    lw = max(1, round(big / 56))
    static = clutter(
        np.random.default_rng(plan.background_seed), big, big, CLUTTER_ITEMS, CLUTTER_CONTRAST
    )
    draw = ImageDraw.Draw(static)
    for cx, cy, side, angle in plan.distractors:
        pts = place(L_SHAPE, cx * k, cy * k, side * k, angle)
        draw.polygon([tuple(p) for p in pts], fill=plan.colour, outline=OUTLINE, width=lw)
    static_small = static.resize((size, size), Image.BOX)
    out = np.empty((len(plan.states), size, size, 3), np.uint8)
    for t, (cx, cy, side, angle, alpha) in enumerate(plan.states):
        if alpha <= 0:
            out[t] = np.asarray(static_small)
            continue
        img = static.copy()
        pts = place(L_SHAPE, cx * k, cy * k, side * k, angle)
        ImageDraw.Draw(img).polygon(
            [tuple(p) for p in pts], fill=plan.colour, outline=OUTLINE, width=lw
        )
        small = img.resize((size, size), Image.BOX)
        out[t] = np.asarray(small if alpha >= 1 else Image.blend(static_small, small, alpha))
    return out
