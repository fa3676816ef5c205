"""load_detector + detect_video on a saved tiny (random-weight) detector: online streaming
carries the shift buffers forward only (causal), resets per call, and TSN carries nothing."""

from pathlib import Path

import numpy as np
import pytest
import torch
from mmdet.registry import MODELS
from mmengine.registry import init_default_scope

import detection
from detection.checkpoint import read_detector_checkpoint, save_final
from detection.inference import find_run_files, load_config, load_detector
from detection.live import detect_video

NAMES = ["airplane", "car", "zebra", "watercraft"]  # rfcn_synth_tsm.py's classes

CONFIGS = Path(detection.__file__).parent / "configs"
H, W = 64, 96


def save_run(folder: Path, shift="online", classes=None) -> Path:
    cfg = load_config(CONFIGS / "rfcn_synth_tsm.py")
    cfg.model.backbone.shift = shift
    init_default_scope("mmdet")
    torch.manual_seed(0)
    model = MODELS.build(cfg.model)
    folder.mkdir(parents=True, exist_ok=True)
    save_final(folder / "final.pth", model, classes or NAMES, 7, cfg.pretty_text)
    (folder / "config.py").write_text(cfg.pretty_text)
    return folder


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    return {s: load_detector(save_run(root / str(s), s), device="cpu") for s in ("online", None)}


def frames(n=4, seed=0):
    return np.random.default_rng(seed).integers(0, 256, (n, H, W, 3), dtype=np.uint8)


def same(a, b):
    return (
        a.labels == b.labels
        and np.array_equal(a.boxes, b.boxes)
        and np.array_equal(a.scores, b.scores)
    )


def test_records(runs):
    det = runs["online"]
    assert det.classes == tuple(NAMES)
    calls = []
    out = detect_video(det, frames(), progress=calls.append, score_thr=0.0)
    assert len(out) == 4 and calls == [0.25, 0.5, 0.75, 1.0]
    for i, r in enumerate(out):
        assert r.frame == i and r.boxes.shape == (len(r.scores), 4) and len(r.labels) >= 1
        assert r.boxes.dtype == np.float32 and np.all(np.diff(r.scores) <= 0)
        assert set(r.labels) <= set(det.classes)
        assert r.boxes[:, [0, 2]].max() <= W and r.boxes[:, [1, 3]].max() <= H
        assert r.boxes.min() >= 0
    high = detect_video(det, frames(), score_thr=0.99)
    assert all(len(r.scores) == 0 and r.boxes.shape == (0, 4) for r in high)


def test_stream_is_causal_and_reset_per_call(runs):
    det = runs["online"]
    x = frames(4)
    full = detect_video(det, x, score_thr=0.0)
    again = detect_video(det, x, score_thr=0.0)
    assert all(same(a, b) for a, b in zip(full, again))  # buffers reset per call
    head = detect_video(det, x[:2], score_thr=0.0)
    assert all(same(a, b) for a, b in zip(head, full[:2]))  # past frames only
    y = x.copy()
    y[0] = 255 - y[0]
    changed = detect_video(det, y, score_thr=0.0)
    assert not same(changed[1], full[1])  # frame 0 reaches frame 1


def test_tsn_has_no_memory(runs):
    det = runs[None]
    x = frames(3)
    y = x.copy()
    y[0] = 255 - y[0]
    a, b = detect_video(det, x, score_thr=0.0), detect_video(det, y, score_thr=0.0)
    assert same(a[1], b[1]) and same(a[2], b[2]) and not same(a[0], b[0])


def test_bad_frames(runs):
    with pytest.raises(ValueError, match="uint8"):
        detect_video(runs["online"], np.zeros((2, H, W, 3), np.float32))
    with pytest.raises(ValueError, match=r"\(T, H, W, 3\)"):
        detect_video(runs["online"], np.zeros((H, W, 3), np.uint8))


def test_find_run_files(tmp_path):
    (tmp_path / "config.py").write_text("x = 1\n")
    for name in ("iter_20.pth", "iter_100.pth"):
        (tmp_path / name).write_bytes(b"")
    assert find_run_files(tmp_path) == (tmp_path / "config.py", tmp_path / "iter_100.pth")
    (tmp_path / "final.pth").write_bytes(b"")
    assert find_run_files(tmp_path)[1] == tmp_path / "final.pth"
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "config.py").write_text("x = 1\n")
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        find_run_files(empty)


def test_checkpoint_must_fit(tmp_path):
    run = save_run(tmp_path / "run")
    ckpt = read_detector_checkpoint(run / "final.pth")
    assert ckpt["meta"]["iter"] == 7 and ckpt["meta"]["dataset_meta"]["classes"] == NAMES
    ckpt["state_dict"].pop(next(iter(ckpt["state_dict"])))
    torch.save(ckpt, run / "final.pth")
    with pytest.raises(ValueError, match="does not fit.*1 missing"):
        load_detector(run)
    with pytest.raises(FileNotFoundError, match="detector folder or config not found"):
        load_detector(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="3 class names.*4 classes"):
        load_detector(save_run(tmp_path / "three", classes=["car", "dog", "cat"]))
