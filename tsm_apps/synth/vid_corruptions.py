"""The per-frame corruptions of the synthetic VID snippets (the TSM paper's figure-6 failure
cases): which frames get which kind, the occluding bar's columns, glare and camera-shake blur.

Kinds, at most one per frame, two of the three per snippet (rotating with its index):
``occlusion`` (a dark vertical bar sweeps across 5-8 frames; an object it covers by at least
``OCCLUDED_FRACTION`` of its width is marked ``occluded``), ``glare`` (a radial white-out, 1-2
frames), ``blur`` (camera shake: the whole frame smeared along one direction, 2-3 frames).
"""

from __future__ import annotations

import numpy as np

KINDS = ("occlusion", "glare", "blur")
OCCLUDED_FRACTION = 0.15


def schedule(rng: np.random.Generator, index: int, frames: int) -> dict:
    """``{frame: kind}`` for two of the three kinds (rotating with ``index``)."""
    kinds = [KINDS[index % 3], KINDS[(index + 1) % 3]]
    lengths = {"occlusion": (5, 8), "glare": (1, 2), "blur": (2, 3)}
    out: dict = {}
    for kind in kinds:
        lo, hi = lengths[kind]
        n = int(rng.integers(lo, hi + 1))
        for _ in range(50):
            start = int(rng.integers(0, frames - n + 1))
            span = range(max(0, start - 1), min(frames, start + n + 1))
            if not any(f in out for f in span):
                out.update({f: kind for f in range(start, start + n)})
                break
    return out


def corrupt(arr: np.ndarray, kind: str, rng: np.random.Generator) -> np.ndarray:
    """Glare (radial white-out) or motion blur of a float ``(H, W, 3)`` frame."""
    h, w = arr.shape[:2]
    if kind == "glare":
        cy, cx = rng.uniform(0.2, 0.8) * h, rng.uniform(0.2, 0.8) * w
        sigma = rng.uniform(0.3, 0.45) * w
        yy, xx = np.mgrid[0:h, 0:w]
        g = rng.uniform(0.8, 0.95) * np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * sigma**2))
        return arr + (255 - arr) * g[..., None]
    length, angle = int(rng.integers(7, 14)), rng.uniform(0, np.pi)
    pad = length
    padded = np.pad(arr, ((pad, pad), (pad, pad), (0, 0)), mode="edge")
    out = np.zeros_like(arr)
    for s in np.linspace(-length / 2, length / 2, length):
        dx, dy = int(round(s * np.cos(angle))), int(round(s * np.sin(angle)))
        out += padded[pad + dy : pad + dy + h, pad + dx : pad + dx + w]
    return out / length


def bar_columns(rng: np.random.Generator, schedule: dict, width: int) -> dict:
    """``{frame: (x1, x2)}``: the occluding bar's columns over the occlusion frames."""
    frames = sorted(f for f, k in schedule.items() if k == "occlusion")
    if not frames:
        return {}
    bw = int(round(rng.uniform(0.1, 0.16) * width))
    sign = 1 if rng.uniform() < 0.5 else -1
    out = {}
    for j, f in enumerate(frames):
        x = -bw + (width + bw) * (j + 0.5) / len(frames)
        x = x if sign > 0 else width - bw - x
        x1 = int(round(x))
        out[f] = (max(0, x1), min(width, x1 + bw))
    return out
