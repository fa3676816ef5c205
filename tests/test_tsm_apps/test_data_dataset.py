"""VideoDataset: sampled frames reach the tensor, seeds, modes, and skipping bad videos."""

import logging

import numpy as np
import pytest
import torch
from PIL import Image
from torch.utils.data import DataLoader

from tsm_apps.data import (
    Compose,
    GroupRandomCrop,
    ToTensor,
    VideoDataset,
    VideoDecodeError,
    VideoSource,
    collate_skip_none,
    write_video,
)
from tsm_apps.data.sampling import sample_val

MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)
FOLDER = dict(frame_template="img_{:05d}.png")


def random_crop(size):
    """A training transform without normalisation (picklable: module level)."""
    return Compose([GroupRandomCrop(6), ToTensor()])


def folder_video(root, name, n, h=8, w=10):
    """Frame i is filled with the value 2*i (PNG: exact)."""
    d = root / name
    d.mkdir()
    for i in range(n):
        Image.fromarray(np.full((h, w, 3), 2 * i, np.uint8)).save(d / f"img_{i + 1:05d}.png")
    return VideoSource(d, n, label=len(name))


@pytest.fixture
def records(tmp_path):
    return [
        folder_video(tmp_path, "a", 20),
        folder_video(tmp_path, "bb", 12),
        folder_video(tmp_path, "ccc", 30),
    ]


def frame_values(clip, normalised=False):
    """The frame index each output frame came from (value 2*i / 255 everywhere)."""
    if normalised:
        clip = clip * STD + MEAN
    v = clip.mean(dim=(1, 2, 3)) * 255 / 2
    assert torch.allclose(clip, clip[:, :1, :1, :1].expand_as(clip), atol=1e-5)
    return v.round().long().tolist()


def test_val_returns_exactly_the_sampled_frames(records):
    # validation = the test protocol's one view: shorter side 8 * 256 // 224 = 9, centre crop 8
    ds = VideoDataset(records, 4, mode="val", size=8, **FOLDER)
    clip, label = ds[0]
    assert clip.shape == (4, 3, 8, 8) and clip.dtype == torch.float32 and label == 1
    assert frame_values(clip, True) == sample_val(20, 4).tolist() == [2, 7, 12, 17]
    assert len(ds) == 3 and ds.labels == [1, 2, 3]


def test_train_is_deterministic_by_seed_and_epoch(records):
    kw = dict(FOLDER, transform=random_crop)
    ds = VideoDataset(records, 4, mode="train", seed=3, **kw)
    a = frame_values(ds[2][0])
    assert [i // 7 for i in a] == [0, 1, 2, 3]  # 30 frames, 4 segments of 7
    assert a == frame_values(VideoDataset(records, 4, mode="train", seed=3, **kw)[2][0])
    assert torch.equal(ds[2][0], ds[2][0])
    seen = set()
    for epoch in range(6):
        ds.set_epoch(epoch)
        seen.add(tuple(frame_values(ds[2][0])))
    assert len(seen) > 1


def test_dataset_pickles_for_spawned_workers(records):
    import pickle

    for kw in (
        dict(mode="train"),
        dict(mode="train", sampling="dense", dense_window=8),
        dict(mode="train", transform=random_crop),
        dict(mode="val"),
    ):
        ds = VideoDataset(records, 4, size=8, seed=1, **FOLDER, **kw)
        again = pickle.loads(pickle.dumps(ds))
        assert torch.equal(again[2][0], ds[2][0])


def test_dense_training_clips_are_strided_from_a_random_start(records):
    # 30 frames, window 8, T 4: stride 2, start in [0, max(1, 1 + 30 - 8) - 1) = [0, 22)
    ds = VideoDataset(
        records, 4, mode="train", transform=random_crop, sampling="dense", dense_window=8, **FOLDER
    )
    starts = set()
    for epoch in range(8):
        ds.set_epoch(epoch)
        v = frame_values(ds[2][0])
        assert [b - a for a, b in zip(v, v[1:])] == [2, 2, 2] and 0 <= v[0] < 22
        starts.add(v[0])
    assert len(starts) > 1


def test_multigrid_keys_change_the_clip_shape(records):
    ds = VideoDataset(records, 4, mode="train", size=8, **FOLDER)
    assert ds[(0, 2, 6)][0].shape == (2, 3, 6, 6)
    assert VideoDataset(records, 4, mode="val", size=8, **FOLDER)[(0, 2, 6)][0].shape == (
        2,
        3,
        6,
        6,
    )


def test_mp4_records(tmp_path):
    frames = np.zeros((30, 16, 16, 3), np.uint8)
    path = write_video(tmp_path / "v.mp4", frames, fps=10)
    ds = VideoDataset([VideoSource(path, 30, 4)], 8, mode="train", size=16, transform=random_crop)
    clip, label = ds[0]
    assert clip.shape == (8, 3, 6, 6) and label == 4 and clip.abs().max() < 0.05


def test_skip_counts_logs_and_never_substitutes(records, tmp_path, caplog):
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(b"\x00" * 100)
    recs = records + [VideoSource(bad, 10, 9), VideoSource(records[1].path, 50, 2)]  # 50 > 12
    ds = VideoDataset(recs, 4, mode="val", size=8, on_error="skip", **FOLDER)
    with caplog.at_level(logging.WARNING, logger="tsm_apps.data.dataset"):
        items = [ds[i] for i in range(len(ds))]
    assert items[3] is None and items[4] is None and all(x is not None for x in items[:3])
    assert [s[:2] for s in ds.skipped] == [(3, str(bad)), (4, str(records[1].path))]
    assert (
        "cannot open" in ds.skipped[0][2]
        and "frame 18 (img_00019.png) is missing" in ds.skipped[1][2]
    )
    assert sum("skipping video" in r.getMessage() for r in caplog.records) == 2
    batches = list(DataLoader(ds, batch_size=2, collate_fn=collate_skip_none))
    assert [b[0].shape[0] for b in batches[:2]] == [2, 1] and batches[2] is None
    assert batches[1][1].tolist() == [3]  # the survivor of batch 2 is video 2, alone
    assert len(ds.skipped) == 4


def test_raise_is_the_default(records, tmp_path):
    ds = VideoDataset([VideoSource(tmp_path / "missing", 8, 0)], 4, mode="val")
    with pytest.raises(VideoDecodeError, match="missing"):
        ds[0]
    with pytest.raises(ValueError, match="on_error"):
        VideoDataset(records, 4, on_error="ignore")


def test_transform_must_return_a_clip_tensor(records):
    ds = VideoDataset(records, 4, mode="train", transform=lambda size: lambda f, rng: f, **FOLDER)
    with pytest.raises(TypeError, match=r"\(N, C, H, W\) with N = 4 frames"):
        ds[0]
