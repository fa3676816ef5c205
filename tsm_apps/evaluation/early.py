"""Early recognition (TSM paper §5.5.2, figures 7-8; table 7): accuracy vs fraction of video seen.

At fraction ``p`` a video of ``F`` frames has shown its first ``n = ceil(p F)`` frames; every
score below reads only those (a test perturbs the rest and checks the scores do not move):

* TSN: the mean of the 2D model's per-frame logits over all ``n`` frames seen;
* offline TSM: one clip of ``T`` frames sampled (TSN test sampling) from the ``n`` frames seen;
* online TSM: the causal model streamed frame by frame through
  :class:`~tsm_apps.models.online.OnlineRecognizer` at the training spacing ``stride`` (frames
  ``stride // 2 + stride * i``), the mean of its per-frame logits over the frames streamed so far
  (before the first such frame: frame ``n - 1`` alone).

Frames: ``(F, 3, S, S)`` centre crops normalised as in validation. Whole-video accuracy (``p =
1``) of online vs offline TSM is table 7's comparison.
"""

from __future__ import annotations

import math
from typing import Sequence

import torch
from torch import Tensor, nn

from ..data.sampling import sample_test
from ..models.online import OnlineRecognizer
from ..progress import progress_bar

FRACTIONS = tuple(round(0.1 * i, 1) for i in range(1, 11))
EARLY_METHODS = ("tsn", "tsm_offline", "tsm_online")


def seen(num_frames: int, fraction: float) -> int:
    """Frames seen at ``fraction`` of the video: ``max(1, ceil(fraction * F))``."""
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1], got {fraction}")
    return max(1, math.ceil(fraction * num_frames - 1e-9))


@torch.no_grad()
def tsn_scores(model: nn.Module, frames: Tensor, ns: Sequence[int]) -> Tensor:
    """``(len(ns), K)``: mean per-frame logits over frames ``[0, n)`` (a 2D model, no shift)."""
    model.num_segments = len(frames)
    feats = model.features(frames[None])  # (1, F, C, h, w)
    per_frame = model.fc(feats.mean(dim=(3, 4)))[0]  # (F, K)
    return torch.stack([per_frame[:n].mean(0) for n in ns])


@torch.no_grad()
def offline_scores(model: nn.Module, frames: Tensor, ns: Sequence[int], t: int) -> Tensor:
    """``(len(ns), K)``: the offline model on ``t`` frames sampled from the ``n`` seen."""
    model.num_segments = t
    clips = torch.stack([frames[torch.as_tensor(sample_test(n, t))] for n in ns])
    return model(clips)


@torch.no_grad()
def online_scores(model: nn.Module, frames: Tensor, ns: Sequence[int], stride: int) -> Tensor:
    """``(len(ns), K)``: mean streamed logits of frames ``stride // 2 + stride * i < n``."""
    positions = list(range(stride // 2, len(frames), stride))
    with OnlineRecognizer(model) as rec:
        logits = [rec.step(frames[p][None])[0] for p in positions]
        out = []
        for n in ns:
            got = [lg for p, lg in zip(positions, logits) if p < n]
            if not got:  # nothing streamed yet: the last frame seen on its own
                rec.reset()
                got = [rec.step(frames[n - 1][None])[0]]
            out.append(torch.stack(got).mean(0))
    return torch.stack(out)


def video_curves(
    models: dict,
    frames: Tensor,
    fractions: Sequence[float] = FRACTIONS,
    t: int = 8,
    stride: int = 2,
) -> dict:
    """``{method: (len(fractions), K) logits}`` for one video's frames ``(F, 3, S, S)``;
    ``models`` maps method names of :data:`EARLY_METHODS` to recognizers (missing ones skipped)."""
    ns = [seen(len(frames), p) for p in fractions]
    out = {}
    if "tsn" in models:
        out["tsn"] = tsn_scores(models["tsn"], frames, ns)
    if "tsm_offline" in models:
        out["tsm_offline"] = offline_scores(models["tsm_offline"], frames, ns, t)
    if "tsm_online" in models:
        out["tsm_online"] = online_scores(models["tsm_online"], frames, ns, stride)
    return out


def early_recognition(
    models: dict,
    videos: Sequence[tuple],
    fractions: Sequence[float] = FRACTIONS,
    t: int = 8,
    stride: int = 2,
    progress: bool = False,
) -> dict:
    """Top-1 (%) per method and fraction over ``videos`` = ``[(frames (F,3,S,S), label)]``.

    Returns ``{"fractions": [...], "top1": {method: [...]}, "videos": N}``.
    """
    for m in models.values():
        m.eval()
    hits = {k: torch.zeros(len(fractions)) for k in models}
    items = progress_bar(videos, desc="early recognition", unit="video", enabled=progress)
    n = 0
    for frames, label in items:
        for k, logits in video_curves(models, frames, fractions, t, stride).items():
            hits[k] += (logits.argmax(1) == label).float()
        n += 1
    return {
        "fractions": list(fractions),
        "videos": n,
        "top1": {k: (100 * v / max(n, 1)).tolist() for k, v in hits.items()},
    }
