"""ImageNet-VID mAP recomputed on bootstrap resamples of the test snippets, fast.

The metric is :func:`detection.vid_eval.evaluate_vid`'s: the same splits
(:func:`~detection.vid_eval.vid_splits`), the same per-frame matching
(:func:`~detection.vid_eval.match_frame`) and the same VOC all-point AP. A snippet drawn ``k``
times counts ``k`` times: its detections' TP/FP weights and its positives are multiplied by
``k``. Matching is per frame, so it is done once (:func:`split_table`), and so is the ranking:
per class, the cumulative TP and FP weights of each snippet up to each true positive. A
resample's cumulative sums are then one matrix product with its snippet counts, and its AP the
area under the precision envelope at the true positives (where recall steps), for many
resamples at once (:func:`weighted_map`). On the full sample this is :func:`evaluate_vid`'s AP up
to rounding; :func:`map_statistic` also returns the figures of :func:`evaluate_vid` itself.

Duplicated snippets are ranked next to each other (one weighted detection); concatenating the
copies instead places them apart only where two detections have exactly the same score, and
the two give the same AP up to rounding otherwise (the copies of a TP only raise precision).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from statistics import fmean
from typing import Callable, Mapping, Optional, Sequence

import numpy as np

from tsm_apps.evaluation.bootstrap import RESAMPLES, paired_bootstrap

from .records import FrameDetections, FrameTruth
from .results import frame_path
from .vid_eval import evaluate_vid, match_frame, vid_splits

Snippet = Callable[[str], str]


def snippet_of(frame: str) -> str:
    """A frame key's snippet: its folder (``.../Data/VID/test/<snippet>/000003.JPEG``)."""
    return Path(frame).parent.as_posix()


@dataclass(frozen=True)
class SplitTable:
    """One split of one detector's results, matched once: the pooled detections ranked by
    score as :func:`~detection.vid_eval.class_aps` ranks them, ``(D,)`` each -- ``labels``,
    ``tp``, ``fp`` (for ``empty``: detections of frames without GT, the weight is the
    resample's fraction of GT in the split, as :func:`~detection.vid_eval.split_aps`),
    ``item`` (snippet index); per snippet ``npos (N, C)`` positives per class, ``in_split
    (N,)`` and ``total (N,)`` GT boxes counted and all, over the split's frames; ``curves``:
    per class :func:`class_curves`."""

    labels: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    empty: np.ndarray
    item: np.ndarray
    npos: np.ndarray
    in_split: np.ndarray
    total: np.ndarray
    curves: tuple = ()


def class_curves(table: SplitTable, c: int) -> tuple:
    """``(tp, fp, fp_empty)``, each ``(N, T)``: per snippet, the TP weights, the FP weights of
    frames with GT and those of frames without GT (scaled by the resample's empty weight)
    summed over class ``c``'s ranked detections up to each of its ``T`` true positives."""
    sel = table.labels == c
    onehot = (table.item[sel][None, :] == np.arange(len(table.npos))[:, None]).astype(np.float64)
    tp, fp, empty = table.tp[sel], table.fp[sel], table.empty[sel]
    cols = np.flatnonzero(tp > 0)
    return tuple(np.cumsum(onehot * v, axis=1)[:, cols] for v in (tp, fp * ~empty, fp * empty))


def split_table(
    detections: Mapping[str, FrameDetections],
    ground_truth: Mapping[str, FrameTruth],
    num_classes: int,
    frames: Sequence[str],
    counted: Mapping[str, np.ndarray],
    items: Mapping[str, int],
) -> SplitTable:
    """Match every frame of ``frames`` once; ``items``: frame -> snippet index in ``[0, N)``."""
    n = max(items.values(), default=-1) + 1
    npos, in_split, total = np.zeros((n, num_classes)), np.zeros(n), np.zeros(n)
    parts = []
    for f in frames:
        truth, keep, i = ground_truth[f], counted[f], items[f]
        np.add.at(npos[i], truth.label_ids[keep], 1)
        in_split[i] += int(keep.sum())
        total[i] += len(truth.label_ids)
        det = detections.get(f)
        if det is not None and len(det.scores):
            tp, fp = match_frame(det, truth, keep, 1.0)
            k = len(det.scores)
            empty = np.full(k, len(truth.label_ids) == 0)
            scores = np.asarray(det.scores, np.float64)
            parts.append((scores, det.label_ids, tp, fp, empty, np.full(k, i)))
    if not parts:
        parts = [(np.zeros(0), np.zeros(0, np.int64), np.zeros(0), np.zeros(0), np.zeros(0, bool))]
        parts[0] += (np.zeros(0, np.int64),)
    scores, labels, tp, fp, empty, item = (np.concatenate(p) for p in zip(*parts))
    order = np.argsort(-scores, kind="stable")
    table = SplitTable(
        labels[order], tp[order], fp[order], empty[order], item[order], npos, in_split, total
    )
    curves = tuple(class_curves(table, c) for c in range(num_classes))
    return replace(table, curves=curves)


def weighted_map(table: SplitTable, counts: np.ndarray) -> np.ndarray:
    """``(b,)`` mAP (percent) of the resamples ``counts (b, N)`` (copies of each snippet);
    NaN where no class has a positive."""
    w = np.asarray(counts, np.float64)
    if w.ndim != 2 or w.shape[1] != len(table.npos):
        raise ValueError(f"counts must be (b, {len(table.npos)}), got shape {w.shape}")
    total = w @ table.total
    ew = np.where(total > 0, (w @ table.in_split) / np.where(total > 0, total, 1.0), 1.0)
    npos = w @ table.npos  # (b, C)
    aps = np.full(npos.shape, np.nan)
    for c in np.flatnonzero((npos > 0).any(axis=0)):
        tp, fp, fp_empty = table.curves[c]
        ctp = w @ tp  # (b, T): at each true positive
        cfp = w @ fp + ew[:, None] * (w @ fp_empty)
        prec = ctp / np.maximum(ctp + cfp, np.finfo(np.float64).eps)
        with np.errstate(invalid="ignore", divide="ignore"):
            rec = ctp / npos[:, c : c + 1]
        env = np.maximum.accumulate(prec[:, ::-1], axis=1)[:, ::-1]
        step = np.diff(rec, axis=1, prepend=0.0)
        ap = np.sum(step * env, axis=1)
        aps[:, c] = np.where(npos[:, c] > 0, ap, np.nan)
    defined = ~np.isnan(aps)
    with np.errstate(invalid="ignore"):
        return np.where(
            defined.any(axis=1), 100.0 * np.nansum(aps, axis=1) / defined.sum(axis=1), np.nan
        )


@dataclass(frozen=True)
class DetectorResults:
    """One detector's test results: per-frame detections and ground truth (frame keys: the
    image paths), the class list; ``metrics``: their :func:`evaluate_vid` (None: not yet)."""

    detections: dict
    ground_truth: dict
    classes: tuple
    metrics: Optional[dict] = None


def run_metrics(results: DetectorResults) -> dict:
    """:func:`evaluate_vid` of ``results`` (theirs when they carry it)."""
    if results.metrics is not None:
        return results.metrics
    return evaluate_vid(results.detections, results.ground_truth, results.classes)


def read_results(path: str | os.PathLike) -> DetectorResults:
    """``results.json`` of ``tsm detect test`` and its frames' ground truth, read the way
    ``VIDMetric`` reads it (the annotation XML beside each image, motion IoU, corruptions);
    frames are named by :func:`~detection.results.frame_path`."""
    from tsm_apps.io import read_json

    from .metric import AnnotationCache

    res = read_json(Path(path))
    if not isinstance(res, dict) or "frames" not in res or "classes" not in res:
        raise ValueError(f"{path}: not a tsm detect test results.json (no 'frames'/'classes')")
    classes = tuple(res["classes"])
    dets = {
        frame_path(r["img_path"]): FrameDetections(
            np.asarray(r["boxes"], np.float64).reshape(-1, 4), r["scores"], r["labels"]
        )
        for r in res["frames"]
    }
    truths = AnnotationCache(classes).truths(list(dets))
    return DetectorResults(dets, truths, classes, evaluate_vid(dets, truths, classes))


def snippet_items(
    ground_truth: Mapping[str, FrameTruth], snippet: Snippet = snippet_of
) -> tuple[list, dict]:
    """``(snippets in order of first frame, {frame: snippet index})``."""
    names: dict = {}
    items = {f: names.setdefault(snippet(f), len(names)) for f in ground_truth}
    return list(names), items


def map_statistic(
    runs: Sequence[Sequence[DetectorResults]], key: str, snippet: Snippet = snippet_of
) -> tuple[Callable[[np.ndarray], np.ndarray], list, list]:
    """The paired statistic of the split ``key`` (``mAP``, ``mAP_fast``, ...) for
    :func:`tsm_apps.evaluation.bootstrap.paired_bootstrap`: ``runs[arm][seed]`` (arm 0 TSN,
    1 TSM), every run on the same snippets (by name; ``ValueError`` otherwise). Returns the
    statistic ``counts (b, N) -> (b,)`` (mean over seeds of TSM - TSN mAP), the snippets and
    ``figures[arm][seed]``: the split's full-sample mAP by :func:`evaluate_vid` itself (what
    ``metrics.json`` holds)."""
    if len(runs) != 2 or len(runs[0]) != len(runs[1]) or not runs[0]:
        raise ValueError(f"need runs[arm][seed] for 2 arms and >= 1 seed, got {len(runs)} arms")
    names, _ = snippet_items(runs[0][0].ground_truth, snippet)
    index = {s: i for i, s in enumerate(names)}
    tables, figures = [], []
    for arm in runs:
        row = []
        figures.append([run_metrics(r)[key] for r in arm])
        for r in arm:
            mine, items = snippet_items(r.ground_truth, snippet)
            if sorted(mine) != sorted(names):
                raise ValueError(
                    f"detector results on different snippets: {len(mine)} vs {len(names)}"
                )
            split = vid_splits(r.ground_truth).get(key)
            if split is None:
                raise ValueError(f"split {key!r} is not defined on these results")
            frames, counted = split
            items = {f: index[mine[i]] for f, i in items.items()}
            row.append(
                split_table(r.detections, r.ground_truth, len(r.classes), frames, counted, items)
            )
        tables.append(row)

    def statistic(counts: np.ndarray) -> np.ndarray:
        tsn = np.stack([weighted_map(t, counts) for t in tables[0]])
        tsm = np.stack([weighted_map(t, counts) for t in tables[1]])
        return (tsm - tsn).mean(axis=0)

    return statistic, names, figures


def full_sample_map(table: SplitTable) -> Optional[float]:
    """The split's mAP on the full sample (every snippet once)."""
    v = float(weighted_map(table, np.ones((1, len(table.npos))))[0])
    return None if np.isnan(v) else v


def compare_arms(
    base: Sequence[DetectorResults],
    other: Sequence[DetectorResults],
    keys: Optional[Sequence[str]] = None,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> dict:
    """``other`` - ``base`` per split, paired by training seed: ``base[i]`` and ``other[i]`` are
    one seed's runs of the two arms, every run on the same snippets. ``keys``: the splits
    (default: every split of :func:`~detection.vid_eval.vid_splits` on these runs). Returns per
    key ``{"base": [mAP per seed], "other": [...], "diff": [...], "interval": {...}}`` (the
    paired bootstrap of the mean over seeds of other - base, :func:`map_statistic`), or
    ``{"unavailable": why}`` where a run has no figure for the split."""
    if len(base) != len(other) or not base:
        raise ValueError(
            f"need one run per seed in both arms, got {len(base)} base and {len(other)} other"
        )
    runs = [list(base), list(other)]
    out = {}
    for key in keys or list(vid_splits(base[0].ground_truth)):
        figures = [[run_metrics(r).get(key) for r in arm] for arm in runs]
        if any(v is None for arm in figures for v in arm):
            out[key] = {"unavailable": f"no {key} figure in every run"}
            continue
        stat, names, figures = map_statistic(runs, key)
        diff = [o - b for b, o in zip(*figures)]
        ci = paired_bootstrap(stat, len(names), resamples, seed, point=fmean(diff))
        out[key] = {"base": figures[0], "other": figures[1], "diff": diff, "interval": ci.to_dict()}
    return out
