"""The paired-bootstrap interval of each TSM-vs-TSN comparison over the test items.

Every comparison of :mod:`.seeds` is recomputed on resamples of its test items
(:func:`tsm_apps.evaluation.bootstrap.paired_bootstrap`): the held-out clips for recognition
(``test.json``'s per-video ``top1_hit``) and dissection (``metrics.json``'s per-clip records),
the test snippets for detection (``results.json``, scored by
:mod:`detection.vid_bootstrap` with the metric of ``metrics.json``). One resample serves both
models and every training seed. :func:`write_intervals` keeps the result in ``intervals.json``
with the per-seed figures it rests on; :func:`ui.runs.seeds.spreads` shows it while they are
still the run folder's.
"""

from __future__ import annotations

from pathlib import Path
from statistics import fmean
from typing import Callable, Optional

import numpy as np

from dissect.comparison import both_correct
from tsm_apps.evaluation.bootstrap import (
    LEVEL,
    RESAMPLES,
    BootstrapInterval,
    paired_bootstrap,
    ratio_statistic,
)
from tsm_apps.io import atomic_write_json, read_json

from .layout import MODELS, RunLayout
from .seeds import BOTH_CORRECT, Spread, seed_layouts, spreads

Items = dict  # {item id: (numerator, denominator)} per model


def _recognition_items(runs: RunLayout) -> Optional[dict]:
    """``{model: {video: (hit, 1)}}`` from ``test.json`` (None without ``top1_hit``)."""
    out = {}
    for m in MODELS:
        preds = (read_json(runs.recognizer_test(m), missing_ok=True) or {}).get("predictions")
        labelled = [p for p in preds or [] if p.get("label") is not None]
        if not labelled or any("top1_hit" not in p for p in labelled):
            return None
        out[m] = {p["video"]: (float(p["top1_hit"]), 1.0) for p in labelled}
    return out


def _clips(runs: RunLayout) -> Optional[dict]:
    out = {}
    for m in MODELS:
        met = read_json(runs.dissection(m) / "metrics.json", missing_ok=True) or {}
        if not met.get("clips"):
            return None
        out[m] = met["clips"]
    return out


def _frames_items(key: str, only_both_correct: bool = False) -> Callable:
    """Per clip ``(hits, frames with a box)`` of ``scores.method[key]`` (frame-pooled, as
    ``metrics.json`` pools it); with ``only_both_correct`` the other clips weigh 0."""

    def read(runs: RunLayout) -> Optional[dict]:
        clips = _clips(runs)
        if clips is None:
            return None
        keep = set(both_correct(*(clips[m] for m in MODELS))) if only_both_correct else None
        out = {}
        for m in MODELS:
            out[m] = {}
            for cid, rec in clips[m].items():
                hits = [h for h in rec["scores"]["method"].get(key, []) if h is not None]
                w = 0.0 if keep is not None and cid not in keep else 1.0
                out[m][cid] = (w * sum(hits), w * len(hits))
        return out

    return read


def _clip_mean_items(key: str) -> Callable:
    """Per clip ``(value, 1)``, ``(0, 0)`` where undefined (a mean over the clips)."""

    def read(runs: RunLayout) -> Optional[dict]:
        clips = _clips(runs)
        if clips is None:
            return None
        out = {}
        for m in MODELS:
            vals = {cid: rec["scores"]["method"].get(key) for cid, rec in clips[m].items()}
            out[m] = {cid: (0.0, 0.0) if v is None else (float(v), 1.0) for cid, v in vals.items()}
        return out

    return read


RATIO_ITEMS = {
    "top1": (_recognition_items, 100.0),
    "pointing": (_frames_items("pointing"), 1.0),
    BOTH_CORRECT: (_frames_items("pointing", only_both_correct=True), 1.0),
    "pointing_tol": (_frames_items("pointing_tol"), 1.0),
    "temporal_auc": (_clip_mean_items("temporal_auc"), 1.0),
}
"""Comparisons that are a ratio of sums over clips: the per-item reader and the scale."""


def _used_layouts(root: Path, spread: Spread) -> list:
    """The seeds' layouts where both models have the comparison's figure (as ``spreads``)."""
    return [
        runs
        for runs in seed_layouts(root).values()
        if all(spread.comparison.read(runs, m) is not None for m in MODELS)
    ]


def _ratio_interval(root: Path, spread: Spread, resamples: int, seed: int) -> BootstrapInterval:
    reader, scale = RATIO_ITEMS[spread.comparison.key]
    per_seed = []
    for runs in _used_layouts(root, spread):
        items = reader(runs)
        if items is None:
            raise ValueError(f"no per-item results under {runs.root}")
        per_seed.append(items)
    ids = list(per_seed[0]["tsn"])
    for items in per_seed:
        if any(sorted(items[m]) != sorted(ids) for m in MODELS):
            raise ValueError("the seeds' or models' results are on different test items")
    num = np.array([[[it[m][i][0] for i in ids] for it in per_seed] for m in MODELS])
    den = np.array([[[it[m][i][1] for i in ids] for it in per_seed] for m in MODELS])
    return paired_bootstrap(
        ratio_statistic(num, den, scale), len(ids), resamples, seed, point=fmean(spread.diff)
    )


def _detection_interval(
    root: Path, spread: Spread, resamples: int, seed: int, cache: dict
) -> BootstrapInterval:
    from detection.vid_bootstrap import compare_arms, read_results

    runs = []
    for m in MODELS:
        row = []
        for lay in _used_layouts(root, spread):
            path = lay.detector(m) / "test" / "results.json"
            if not path.is_file():
                raise ValueError(f"no {lay.rel(path)}")
            if path not in cache:
                cache[path] = read_results(path)
            row.append(cache[path])
        runs.append(row)
    key = spread.comparison.key
    r = compare_arms(runs[0], runs[1], [key], resamples, seed)[key]
    if "unavailable" in r:
        raise ValueError(r["unavailable"])
    if [r["base"], r["other"]] != [spread.tsn, spread.tsm]:
        raise ValueError("results.json does not give metrics.json's figures")
    return BootstrapInterval(**r["interval"])


def compute_intervals(root: Path, resamples: int = RESAMPLES, seed: int = 0) -> dict:
    """``intervals.json``'s content: per comparison the per-seed figures and the interval (or
    why there is none)."""
    cache: dict = {}
    out = {}
    for s in spreads(root):
        entry = {"seeds": s.seeds, "tsn": s.tsn, "tsm": s.tsm}
        try:
            if s.comparison.group == "detection":
                ci = _detection_interval(root, s, resamples, seed, cache)
            elif s.comparison.key in RATIO_ITEMS:
                ci = _ratio_interval(root, s, resamples, seed)
            else:
                raise ValueError("no per-item reader")
            entry["interval"] = ci.to_dict()
        except (ValueError, OSError) as e:  # missing or unreadable per-item results
            entry["unavailable"] = str(e)
        out[s.comparison.key] = entry
    return {"resamples": resamples, "seed": seed, "level": LEVEL, "comparisons": out}


def write_intervals(root: str | Path, resamples: int = RESAMPLES, seed: int = 0) -> Path:
    """Compute every comparison's interval and write ``<root>/intervals.json``."""
    path = RunLayout(Path(root)).intervals
    atomic_write_json(path, compute_intervals(Path(root), resamples, seed))
    return path
