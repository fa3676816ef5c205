"""The VID mAP on bootstrap resamples of snippets: the full sample is metrics.json's figure
exactly; a resample equals evaluate_vid run on the drawn snippets' frames copied as often as
drawn (an independent recomputation, frame by frame)."""

import json

import numpy as np
import pytest
import torch

from detection.metric import DetectionsDump, VIDMetric
from detection.records import FrameDetections, FrameTruth
from detection.results import write_metrics
from detection.vid_bootstrap import (
    DetectorResults,
    map_statistic,
    read_results,
    split_table,
    weighted_map,
)
from detection.vid_dataset import ImageNetVIDDataset
from detection.vid_eval import evaluate_vid, vid_splits
from tsm_apps.evaluation.bootstrap import counts_of, paired_bootstrap, resample_indices
from vid_fixtures import GT, make_vid, sample

CLASSES = ImageNetVIDDataset.METAINFO["classes"]


def _records(seed: int, snippets: int = 5, frames: int = 4, classes: int = 3) -> tuple:
    """Random GT and detections (distinct scores); motion IoU and corruptions on some frames;
    one snippet's first frame without GT."""
    rng = np.random.default_rng(seed)
    dets, truths = {}, {}
    kinds = [None, None, "blur", "glare"]
    for s in range(snippets):
        for t in range(frames):
            key = f"/d/Data/VID/test/S{s}/{t:06d}.JPEG"
            g = 0 if (s, t) == (1, 0) else int(rng.integers(1, 4))
            xy = rng.uniform(0, 60, (g, 2))
            gt = np.concatenate([xy, xy + rng.uniform(8, 30, (g, 2))], axis=1)
            truths[key] = FrameTruth(
                gt,
                rng.integers(0, classes, g),
                motion_iou=rng.uniform(0.5, 1.0, g),
                corruption=kinds[(s + t) % 4],
            )
            k = int(rng.integers(0, 5))
            src = gt[rng.integers(0, max(g, 1), k)] if g else rng.uniform(0, 60, (k, 4))
            boxes = src + rng.normal(0, 3, (k, 4))
            boxes[:, 2:] = np.maximum(boxes[:, 2:], boxes[:, :2] + 1)
            dets[key] = FrameDetections(boxes, rng.uniform(0, 1, k), rng.integers(0, classes, k))
    return dets, truths


def _copies(dets: dict, truths: dict, draw: np.ndarray) -> tuple:
    """The drawn snippets' frames, copy ``j`` of a snippet under its own key, in drawn order."""
    by_snippet: dict = {}
    for f in truths:
        by_snippet.setdefault(f.split("/")[-2], []).append(f)
    names = list(by_snippet)
    d2, t2 = {}, {}
    for j, i in enumerate(draw):
        for f in by_snippet[names[i]]:
            key = f"copy{j}/{f}"
            t2[key] = truths[f]
            if f in dets:
                d2[key] = dets[f]
    return d2, t2


@pytest.mark.parametrize("key", ["mAP", "mAP_fast", "mAP_corrupted", "mAP_corrupted_glare"])
def test_resample_equals_evaluate_vid_on_copied_frames(key):
    dets, truths = _records(0)
    frames, counted = vid_splits(truths)[key]
    items = {f: int(f.split("/")[-2][1:]) for f in truths}
    table = split_table(dets, truths, 3, frames, counted, items)
    draws = resample_indices(5, 6, seed=3)
    got = weighted_map(table, counts_of(draws, 5))
    for draw, g in zip(draws, got):
        d2, t2 = _copies(dets, truths, draw)
        want = evaluate_vid(d2, t2, ["a", "b", "c"])[key]
        if want is None:
            assert np.isnan(g)
        else:
            assert g == pytest.approx(want, abs=1e-9)
    full = weighted_map(table, np.ones((1, 5)))[0]
    assert full == pytest.approx(evaluate_vid(dets, truths, ["a", "b", "c"])[key], abs=1e-9)


def test_statistic_pairs_the_snippets_across_arms_and_seeds():
    runs_tsn = [_records(s) for s in (1, 2)]
    runs_tsm = [_records(s) for s in (3, 4)]

    # every run shares the first run's ground truth (the same test snippets)
    gt, abc = runs_tsn[0][1], ("a", "b", "c")
    arms = [[DetectorResults(d, gt, abc) for d, _ in r] for r in (runs_tsn, runs_tsm)]
    stat, names, figures = map_statistic(arms, "mAP")
    assert names == [f"/d/Data/VID/test/S{s}" for s in range(5)]
    draws = resample_indices(5, 4, seed=7)
    by_hand = []
    for draw in draws:
        per_seed = []
        for a, b in zip(arms[0], arms[1]):
            ta = evaluate_vid(*_copies(a.detections, gt, draw), a.classes)["mAP"]
            tb = evaluate_vid(*_copies(b.detections, gt, draw), b.classes)["mAP"]
            per_seed.append(tb - ta)
        by_hand.append(np.mean(per_seed))
    assert stat(counts_of(draws, 5)) == pytest.approx(by_hand, abs=1e-9)
    point = np.mean([b - a for a, b in zip(*figures)])
    ci = paired_bootstrap(stat, 5, resamples=50, seed=0, point=point)
    assert ci.point == point and ci.low <= ci.high


def test_full_sample_is_metrics_json_exactly(tmp_path):
    """VIDMetric and DetectionsDump see the same samples (noisy boxes, distinct scores):
    read_results + evaluate_vid give metrics.json's numbers, bit for bit."""
    root = make_vid(tmp_path / "vid")
    g = torch.Generator().manual_seed(0)
    samples = []
    for t in GT:
        s = sample(root, t, GT[t] + [([1, 1, 9, 9], 6)])
        p = s["pred_instances"]
        p["bboxes"] = p["bboxes"] + torch.randn(p["bboxes"].shape, generator=g) * 2
        p["scores"] = torch.rand(len(p["scores"]), generator=g)
        samples.append(s)
    metric, dump = VIDMetric(), DetectionsDump(str(tmp_path / "test" / "results.json"))
    for m in (metric, dump):
        m.dataset_meta = {"classes": CLASSES}
        m.process({}, samples)
    metrics = json.loads(
        write_metrics(tmp_path / "test" / "metrics.json", metric.evaluate(3)).read_text()
    )
    dump.evaluate(3)
    res = read_results(tmp_path / "test" / "results.json")
    for key in ("mAP", "mAP_slow", "mAP_fast"):
        _, _, figures = map_statistic([[res], [res]], key)
        assert figures[0][0] == metrics[key] and metrics[key] is not None
    assert 0 < metrics["mAP"] < 100  # the noisy boxes miss some objects
