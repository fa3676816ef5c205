"""The VID mAP on bootstrap resamples of snippets: the full sample is metrics.json's figure
exactly; a resample equals evaluate_vid run on the drawn snippets' frames copied as often as
drawn (an independent recomputation, frame by frame)."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from detection.metric import DetectionsDump, VIDMetric
from detection.records import FrameDetections, FrameTruth
from detection.results import write_metrics
from detection.vid_bootstrap import (
    DetectorResults,
    compare_arms,
    map_statistic,
    read_results,
    split_table,
    weighted_map,
)
from detection.vid_dataset import ImageNetVIDDataset
from detection.vid_eval import evaluate_vid, vid_splits
from tsm_apps.cli import main as tsm
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
    path, metrics = _dumped_run(make_vid(tmp_path / "vid"), tmp_path, "test", 0)
    res = read_results(path)
    for key in ("mAP", "mAP_slow", "mAP_fast"):
        _, _, figures = map_statistic([[res], [res]], key)
        assert figures[0][0] == metrics[key] and metrics[key] is not None
    assert 0 < metrics["mAP"] < 100  # the noisy boxes miss some objects


def _arms(gt: dict) -> list:
    """Two arms of two seeds each on the snippets of ``gt``: base seeds 1, 2; other 3, 4."""
    return [
        [DetectorResults(_records(s)[0], gt, ("a", "b", "c")) for s in seeds]
        for seeds in ((1, 2), (3, 4))
    ]


@pytest.mark.parametrize("key", ["mAP", "mAP_fast"])
def test_compare_arms_is_the_percentile_interval_of_evaluate_vid_on_copies(key):
    gt = _records(1)[1]
    base, other = _arms(gt)
    got = compare_arms(base, other, [key], resamples=30, seed=5)[key]
    figures = [
        [evaluate_vid(r.detections, gt, r.classes)[key] for r in arm] for arm in (base, other)
    ]
    assert got["base"] == figures[0] and got["other"] == figures[1]
    assert got["diff"] == pytest.approx([o - b for b, o in zip(*figures)], abs=1e-12)
    by_hand = []
    for draw in resample_indices(5, 30, seed=5):
        per_seed = [
            evaluate_vid(*_copies(o.detections, gt, draw), o.classes)[key]
            - evaluate_vid(*_copies(b.detections, gt, draw), b.classes)[key]
            for b, o in zip(base, other)
        ]
        by_hand.append(np.mean(per_seed))
    ci = got["interval"]
    assert ci["point"] == pytest.approx(np.mean(got["diff"]), abs=1e-9)
    assert [ci["low"], ci["high"]] == pytest.approx(np.percentile(by_hand, [2.5, 97.5]), abs=1e-9)
    assert (ci["items"], ci["resamples"], ci["level"]) == (5, 30, 0.95)


def test_compare_arms_of_an_arm_with_itself_is_zero_and_names_missing_splits():
    gt = _records(1)[1]
    base, _ = _arms(gt)
    got = compare_arms(base, base, ["mAP", "mAP_nonexistent"], resamples=20)
    ci = got["mAP"]["interval"]
    assert got["mAP"]["diff"] == [0.0, 0.0] and (ci["point"], ci["low"], ci["high"]) == (0, 0, 0)
    assert got["mAP_nonexistent"] == {"unavailable": "no mAP_nonexistent figure in every run"}
    with pytest.raises(ValueError, match="1 base and 2 other"):
        compare_arms(base[:1], base)
    every = compare_arms(base, base, resamples=5)
    assert list(every) == list(vid_splits(gt))


def _dumped_run(root, tmp_path, name: str, seed: int) -> tuple:
    """``tsm detect test``'s two files for noisy detections of the fixture set: results.json
    (DetectionsDump) and metrics.json (VIDMetric)."""
    g = torch.Generator().manual_seed(seed)
    samples = []
    for t in GT:
        s = sample(root, t, GT[t] + [([1, 1, 9, 9], 6)])
        p = s["pred_instances"]
        p["bboxes"] = p["bboxes"] + torch.randn(p["bboxes"].shape, generator=g) * 2
        p["scores"] = torch.rand(len(p["scores"]), generator=g)
        samples.append(s)
    out = tmp_path / name / "results.json"
    metric, dump = VIDMetric(), DetectionsDump(str(out))
    for m in (metric, dump):
        m.dataset_meta = {"classes": CLASSES}
        m.process({}, samples)
    metrics = json.loads(write_metrics(out.parent / "metrics.json", metric.evaluate(3)).read_text())
    dump.evaluate(3)
    return out, metrics


def test_detect_compare_cli(tmp_path, capsys):
    root = make_vid(tmp_path / "vid")
    (b1, m1), (b2, m2) = (_dumped_run(root, tmp_path, f"tsn{s}", s) for s in (0, 1))
    (o1, n1), (o2, n2) = (_dumped_run(root, tmp_path, f"tsm{s}", s) for s in (2, 3))
    out = tmp_path / "cmp.json"
    argv = ["detect", "compare", "--base", b1, b2, "--other", o1, o2, "--keys", "mAP", "mAP_fast"]
    code = tsm([*map(str, argv), "--resamples", "40", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    got = json.loads(out.read_text())
    for key in ("mAP", "mAP_fast"):
        diff = [n1[key] - m1[key], n2[key] - m2[key]]
        assert got[key]["diff"] == pytest.approx(diff, abs=1e-9)  # metrics.json's figures
        assert got[key]["interval"]["point"] == pytest.approx(np.mean(diff), abs=1e-9)
        assert f"{key}: base {(m1[key] + m2[key]) / 2:.1f}" in printed
    assert set(got) == {"base", "other", "mAP", "mAP_fast"}


def test_detect_compare_bad_input(tmp_path, capsys):
    runs = [str(tmp_path / f"r{i}.json") for i in range(3)]
    code = tsm(["detect", "compare", "--base", runs[0], "--other", *runs[1:]])
    err = capsys.readouterr().err
    assert code == 2 and "1 --base runs but 2 --other runs" in err and "Traceback" not in err
    code = tsm(["detect", "compare", "--base", runs[0], "--other", runs[1]])
    err = capsys.readouterr().err
    assert code == 2 and f"no such results.json: {runs[0]}" in err
    Path(runs[0]).write_text("{}")
    Path(runs[1]).write_text("[]")
    code = tsm(["detect", "compare", "--base", runs[0], "--other", runs[1]])
    err = capsys.readouterr().err
    assert code == 2 and "r0.json: not a tsm detect test results.json" in err
    assert "Traceback" not in err


def test_detect_compare_reads_absolute_and_older_relative_files_alike(tmp_path, monkeypatch):
    """results.json names frames by absolute path, so compare runs from any folder; a file that
    holds relative paths (written before) pairs with it when read from its folder."""
    root = make_vid(tmp_path / "vid")
    (base, m_base), (other, m_other) = (
        _dumped_run(root, tmp_path, n, s) for n, s in (("b", 0), ("o", 1))
    )
    res = json.loads(base.read_text())
    assert all(Path(f["img_path"]).is_absolute() for f in res["frames"])
    old = tmp_path / "old" / "results.json"
    old.parent.mkdir()
    for f in res["frames"]:
        f["img_path"] = str(Path(f["img_path"]).relative_to(tmp_path))
    old.write_text(json.dumps(res))
    want = m_other["mAP"] - m_base["mAP"]
    monkeypatch.chdir(tmp_path)  # the older file's folder
    got = compare_arms([read_results(old)], [read_results(other)], ["mAP"], resamples=20)
    assert got["mAP"]["diff"] == pytest.approx([want], abs=1e-9)
    monkeypatch.chdir("/")  # the new files from anywhere
    got = compare_arms([read_results(base)], [read_results(other)], ["mAP"], resamples=20)
    assert got["mAP"]["diff"] == pytest.approx([want], abs=1e-9)
