"""VideoDataset: sampled frames reach the tensor, seeds, modes, and skipping bad videos."""
import logging

import numpy as np
import pytest
import torch
from PIL import Image
from torch.utils.data import DataLoader

from tsm_apps.data import (GroupRandomCrop, ToTensor, Compose, VideoDataset, VideoDecodeError,
                           VideoRecord, collate_skip_none, write_video)
from tsm_apps.data.sampling import sample_val


def folder_video(root, name, n, h=8, w=10):
    """Frame i is filled with the value 2*i (PNG: exact)."""
    d = root / name
    d.mkdir()
    for i in range(n):
        Image.fromarray(np.full((h, w, 3), 2 * i, np.uint8)).save(d / f"img_{i + 1:05d}.png")
    return VideoRecord(d, n, label=len(name))


@pytest.fixture
def records(tmp_path):
    return [folder_video(tmp_path, "a", 20), folder_video(tmp_path, "bb", 12),
            folder_video(tmp_path, "ccc", 30)]


def frame_values(clip):
    """The frame index each output frame came from (value 2*i / 255 everywhere)."""
    v = clip.mean(dim=(1, 2, 3)) * 255 / 2
    assert torch.allclose(clip, clip[:, :1, :1, :1].expand_as(clip))
    return v.round().long().tolist()


def test_val_returns_exactly_the_sampled_frames(records):
    ds = VideoDataset(records, 4, mode="val", frame_template="img_{:05d}.png")
    clip, label = ds[0]
    assert clip.shape == (4, 3, 8, 10) and clip.dtype == torch.float32 and label == 1
    assert frame_values(clip) == sample_val(20, 4).tolist() == [2, 7, 12, 17]
    assert len(ds) == 3 and ds.labels == [1, 2, 3]


def test_train_is_deterministic_by_seed_and_epoch(records):
    kw = dict(frame_template="img_{:05d}.png", transform=Compose([GroupRandomCrop(6), ToTensor()]))
    ds = VideoDataset(records, 4, mode="train", seed=3, **kw)
    a = frame_values(ds[2][0])
    assert [i // 7 for i in a] == [0, 1, 2, 3]   # 30 frames, 4 segments of 7
    assert a == frame_values(VideoDataset(records, 4, mode="train", seed=3, **kw)[2][0])
    assert torch.equal(ds[2][0], ds[2][0])
    seen = set()
    for epoch in range(6):
        ds.set_epoch(epoch)
        seen.add(tuple(frame_values(ds[2][0])))
    assert len(seen) > 1


def test_dataset_pickles_for_spawned_workers(records):
    import pickle
    for kw in (dict(mode="train"), dict(mode="test", dense=True, dense_window=8),
               dict(mode="test", num_clips=2), dict(mode="val")):
        ds = VideoDataset(records, 4, frame_template="img_{:05d}.png", seed=1, **kw)
        again = pickle.loads(pickle.dumps(ds))
        assert torch.equal(again[2][0], ds[2][0])


def test_test_mode_multi_clip_shapes(records):
    kw = dict(frame_template="img_{:05d}.png")
    clip, _ = VideoDataset(records, 4, mode="test", twice=True, **kw)[0]
    assert clip.shape == (8, 3, 8, 10)
    assert frame_values(clip) == [2, 7, 12, 17, 0, 5, 10, 15]
    clip, _ = VideoDataset(records, 4, mode="test", dense=True, dense_window=8, **kw)[0]
    assert clip.shape == (40, 3, 8, 10)
    assert frame_values(clip)[:8] == [0, 2, 4, 6, 1, 3, 5, 7]  # start 0 then start 1 (linspace 0..12)
    clip, _ = VideoDataset(records, 4, mode="test", num_clips=3, **kw)[1]
    assert clip.shape == (12, 3, 8, 10)


def test_mp4_records(tmp_path):
    frames = np.zeros((30, 16, 16, 3), np.uint8)
    path = write_video(tmp_path / "v.mp4", frames, fps=10)
    ds = VideoDataset([VideoRecord(path, 30, 4)], 8, mode="train")
    clip, label = ds[0]
    assert clip.shape == (8, 3, 16, 16) and label == 4 and clip.abs().max() < 0.05


def test_skip_counts_logs_and_never_substitutes(records, tmp_path, caplog):
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(b"\x00" * 100)
    recs = records + [VideoRecord(bad, 10, 9), VideoRecord(records[1].path, 50, 2)]  # 50 > 12
    ds = VideoDataset(recs, 4, mode="val", on_error="skip", frame_template="img_{:05d}.png")
    with caplog.at_level(logging.WARNING, logger="tsm_apps.data.dataset"):
        items = [ds[i] for i in range(len(ds))]
    assert items[3] is None and items[4] is None and all(x is not None for x in items[:3])
    assert [s[:2] for s in ds.skipped] == [(3, str(bad)), (4, str(records[1].path))]
    assert "cannot open" in ds.skipped[0][2] and "frame 18 (img_00019.png) is missing" in ds.skipped[1][2]
    assert sum("skipping video" in r.getMessage() for r in caplog.records) == 2
    batches = list(DataLoader(ds, batch_size=2, collate_fn=collate_skip_none))
    assert [b[0].shape[0] for b in batches[:2]] == [2, 1] and batches[2] is None
    assert batches[1][1].tolist() == [3]          # the survivor of batch 2 is video 2, alone
    assert len(ds.skipped) == 4


def test_raise_is_the_default(records, tmp_path):
    ds = VideoDataset([VideoRecord(tmp_path / "missing", 8, 0)], 4, mode="val")
    with pytest.raises(VideoDecodeError, match="missing"):
        ds[0]
    with pytest.raises(ValueError, match="on_error"):
        VideoDataset(records, 4, on_error="ignore")


def test_transform_must_return_a_clip_tensor(records):
    ds = VideoDataset(records, 4, mode="val", transform=lambda f, rng: f,
                      frame_template="img_{:05d}.png")
    with pytest.raises(TypeError, match=r"\(N, 3, H, W\)"):
        ds[0]
