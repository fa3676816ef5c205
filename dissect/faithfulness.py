"""Deletion and insertion faithfulness of clip maps (Petsiuk et al., "RISE", BMVC 2018, §4.1;
the authors' ``CausalMetric`` in eclique/RISE ``evaluation.py``), over pixels and over frames.

Deletion: pixels are replaced by a baseline, the most-attributed first, and the explained class's
score is read after each step; insertion starts from the baseline and puts the most-attributed
pixels back first. The area under the score curve over the fraction changed (trapezoid) is the
metric: a faithful map gives a LOW deletion AUC (the score falls fast) and a HIGH insertion AUC.

Two orders for video:

* ``*_pixels``: within every frame, its own ``(H, W)`` map ranks its pixels; step ``k`` of ``K``
  changes the first ``floor(k * H * W / K)`` pixels of every frame (all 3 channels);
* ``*_frames``: whole frames, ranked by their attribution mass (the sum of the positive part of
  the frame's map, :func:`dissect.metrics.frame_mass`); step ``k`` of ``T`` changes ``k`` frames.

Ties keep index order (row-major pixels, earlier frames first). The baseline is the clip's
per-channel mean over ``(T, H, W)``: a removed pixel carries no information of its own, the clip's
overall colour stays (RISE deletes to zeros and inserts from a blurred copy; a blur keeps the
coarse blob a CAM points at and adds a kernel size to choose; the mean has no parameter, is the
same for deletion and insertion, and is the same on normalised or raw pixels, the normalisation
being per-channel affine).

Layouts: clips ``(N, T, 3, H, W)``, maps ``(N, T, H, W)`` on the same pixels, classes ``(N,)``;
``score(x)`` maps clips ``(B, T, 3, H, W)`` to class scores ``(B, K)`` (:func:`softmax_scorer`:
softmax probabilities of a recognizer).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence

import numpy as np
import torch
from torch import Tensor, nn

CURVES = ("deletion_pixels", "insertion_pixels", "deletion_frames", "insertion_frames")
"""The four curves of a clip; lower is more faithful for ``deletion_*``, higher for
``insertion_*``."""
DEFAULT_STEPS = 8
"""Pixel steps per curve (``K``): fractions 0, 1/K, ..., 1 of every frame's pixels."""
DEFAULT_BATCH = 16
"""Perturbed clips per forward pass."""

Scorer = Callable[[Tensor], Tensor]


@dataclass
class Curve:
    """One curve per clip: ``fractions`` ``(S,)`` changed at each step, ``scores`` ``(N, S)``."""

    fractions: Tensor
    scores: Tensor

    @property
    def auc(self) -> Tensor:
        """``(N,)`` trapezoid area under each clip's curve over the fraction changed."""
        return torch.trapezoid(self.scores, self.fractions, dim=-1)


def softmax_scorer(model: nn.Module) -> Scorer:
    """``score(x)``: softmax probabilities ``(B, K)`` of ``model`` for clips ``(B, T, 3, H, W)``."""

    def score(x: Tensor) -> Tensor:
        with torch.no_grad():
            return model(x).softmax(dim=-1)

    return score


def clip_baseline(clips: Tensor) -> Tensor:
    """``(N, T, 3, H, W)`` -> the same shape, each clip's per-channel mean over ``(T, H, W)``."""
    return clips.mean(dim=(1, 3, 4), keepdim=True).expand_as(clips)


def _descending_ranks(values: Tensor) -> Tensor:
    """Rank along the last axis, 0 = largest; ties keep index order."""
    order = torch.argsort(values, dim=-1, descending=True, stable=True)
    ranks = torch.empty_like(order)
    ranks.scatter_(-1, order, torch.arange(values.shape[-1]).expand_as(order).contiguous())
    return ranks


def pixel_ranks(maps: Tensor) -> Tensor:
    """``(N, T, H, W)`` -> ``(N, T, H, W)`` rank of each pixel within its frame (0 = most)."""
    n, t, h, w = maps.shape
    return _descending_ranks(maps.reshape(n, t, h * w)).reshape(n, t, h, w)


def frame_ranks(maps: Tensor) -> Tensor:
    """``(N, T, H, W)`` -> ``(N, T)`` rank of each frame by its mass (0 = most)."""
    return _descending_ranks(maps.clamp_min(0).sum(dim=(-2, -1)))


def step_counts(total: int, steps: int) -> Tensor:
    """``(steps + 1,)`` items changed after each step: ``floor(k * total / steps)``."""
    return torch.arange(steps + 1) * total // steps


def _check(clips: Tensor, maps: Tensor, classes: Tensor, steps: int) -> None:
    if clips.dim() != 5 or clips.shape[2] != 3:
        raise ValueError(f"clips must be (N, T, 3, H, W), got {tuple(clips.shape)}")
    n, t, _, h, w = clips.shape
    if tuple(maps.shape) != (n, t, h, w):
        raise ValueError(f"maps must be (N, T, H, W) = {(n, t, h, w)}, got {tuple(maps.shape)}")
    if tuple(classes.shape) != (n,):
        raise ValueError(f"classes must be (N,) = ({n},), got {tuple(classes.shape)}")
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")


def _scores(variants: Tensor, score: Scorer, cls: int, batch: int) -> Tensor:
    """``(S, T, 3, H, W)`` perturbed copies of one clip -> ``(S,)`` scores of class ``cls``."""
    out = []
    for i in range(0, variants.shape[0], batch):
        s = score(variants[i : i + batch])
        if s.dim() != 2 or s.shape[0] != min(batch, variants.shape[0] - i):
            raise ValueError(f"score must return (B, K) class scores, got {tuple(s.shape)}")
        out.append(s[:, cls].detach().float().cpu())
    return torch.cat(out)


def _curve_scores(x, base, ranks, counts, score, cls, insert, batch) -> Tensor:
    """One clip ``x`` ``(T, 3, H, W)``: ``changed[s] = ranks < counts[s]`` (ranks ``(T, H, W)``
    for pixels or ``(T,)`` for frames) take the baseline (deletion) or the clip (insertion)."""
    ranks = ranks.reshape(ranks.shape[0], 1, *ranks.shape[1:])  # (T, 1, [H, W])
    while ranks.dim() < 4:
        ranks = ranks[..., None]
    changed = ranks[None] < counts.view(-1, 1, 1, 1, 1).to(ranks.device)  # (S, T, 1, H|1, W|1)
    variants = torch.where(changed, x, base) if insert else torch.where(changed, base, x)
    return _scores(variants, score, cls, batch)


def faithfulness_curves(
    clips: Tensor,
    maps: Tensor,
    score: Scorer,
    classes: Tensor,
    steps: int = DEFAULT_STEPS,
    batch: int = DEFAULT_BATCH,
) -> Dict[str, Curve]:
    """The four curves (:data:`CURVES`) of clips ``(N, T, 3, H, W)`` and their maps
    ``(N, T, H, W)``, reading ``score(x)[:, classes[n]]``: pixel curves of ``steps + 1`` points,
    frame curves of ``T + 1`` points."""
    classes = torch.as_tensor(classes)
    _check(clips, maps, classes, steps)
    n, t, _, h, w = clips.shape
    base = clip_baseline(clips)
    orders = {
        "pixels": (pixel_ranks(maps), step_counts(h * w, steps), h * w),
        "frames": (frame_ranks(maps), step_counts(t, t), t),
    }
    out = {}
    for name in CURVES:
        kind, unit = name.split("_")
        ranks, counts, total = orders[unit]
        rows = [
            _curve_scores(
                clips[i],
                base[i],
                ranks[i],
                counts,
                score,
                int(classes[i]),
                kind == "insertion",
                batch,
            )
            for i in range(n)
        ]
        out[name] = Curve(counts.double() / total, torch.stack(rows).double())
    return out


def clip_faithfulness(curves: Dict[str, Curve], index: int = 0) -> dict:
    """Clip ``index`` of :func:`faithfulness_curves` as JSON-ready ``{curve: {fractions,
    scores, auc}}``."""
    return {
        name: {
            "fractions": [float(f) for f in c.fractions],
            "scores": [float(s) for s in c.scores[index]],
            "auc": float(c.auc[index]),
        }
        for name, c in curves.items()
    }


def summarise_faithfulness(records: Sequence[Optional[dict]]) -> dict:
    """Mean over clips of :func:`clip_faithfulness` records: ``<curve>_auc`` and
    ``faithfulness_curves`` (``{curve: {fractions, scores}}``, the mean curve; clips with the
    same fractions). Empty when no record has the curves."""
    have: List[dict] = [r for r in records if r]
    if not have:
        return {}
    out: dict = {f"{name}_auc": float(np.mean([r[name]["auc"] for r in have])) for name in CURVES}
    out["faithfulness_clips"] = len(have)
    out["faithfulness_curves"] = {
        name: {
            "fractions": have[0][name]["fractions"],
            "scores": [float(v) for v in np.mean([r[name]["scores"] for r in have], axis=0)],
        }
        for name in CURVES
    }
    return out
