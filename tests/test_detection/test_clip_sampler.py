"""Clip batch sampler (clips end at their key frame, or start at random), and a tiny ClipRFCN
trained and tested end to end by mmengine's Runner."""

import pickle

import numpy as np
import pytest
import torch
from mmdet.datasets.transforms import PackDetInputs
from mmengine.evaluator import BaseMetric
from mmengine.runner import Runner

import detection  # noqa: F401
from detection.clips import (
    ClipBatchSampler,
    KeyFrameIndex,
    VideoShardSampler,
    build_video_index,
    clip_for_key,
)
from model_fixtures import tiny_cfg

# (video, number of frames): frame entries are listed in a shuffled order on purpose
VIDEOS = {"a": 5, "b": 3, "det": 1}


class FakeVID(torch.utils.data.Dataset):
    """Frame-level entries ``video``/``frame_id``; items packed as mmdet's pipeline packs them."""

    def __init__(self, size=64, with_index=False):
        entries = [(v, f) for v, n in VIDEOS.items() for f in range(n)]
        order = np.random.default_rng(0).permutation(len(entries))
        self.entries = [entries[i] for i in order]
        self.size = size
        if with_index:
            self.video_index = {
                v: [self.entries.index((v, f)) for f in range(n)] for v, n in VIDEOS.items()
            }
        self.pack = PackDetInputs(
            meta_keys=(
                "img_id",
                "img_shape",
                "ori_shape",
                "scale_factor",
                "video",
                "frame_id",
                "clip_key",
            )
        )

    def __len__(self):
        return len(self.entries)

    def get_data_info(self, i):
        v, f = self.entries[i]
        return dict(video=v, frame_id=f)

    def __getitem__(self, i):
        v, f = self.entries[i]
        s = self.size
        img = np.random.default_rng(i).integers(0, 255, (s, s, 3)).astype(np.uint8)
        x = 4 + 2 * f
        img[x : x + 24, x : x + 24] = 255
        return self.pack(
            dict(
                img=img,
                img_shape=(s, s),
                ori_shape=(s, s),
                scale_factor=(1.0, 1.0),
                img_id=f"{v}/{f}",
                video=v,
                frame_id=f,
                clip_key=isinstance(i, KeyFrameIndex),
                gt_bboxes=np.array([[x, x, x + 24, x + 24]], np.float32),
                gt_bboxes_labels=np.array([1]),
                gt_ignore_flags=np.array([False]),
            )
        )


def test_clip_ends_at_the_key_frame():
    frames = list(range(100, 110))
    # key frame at position p >= T-1: frames p-3..p; earlier: the video's first 4 frames
    assert clip_for_key(frames, 5, 4) == [102, 103, 104, 105]
    assert clip_for_key(frames, 9, 4, "end") == [106, 107, 108, 109]
    assert clip_for_key(frames, 3, 4) == [100, 101, 102, 103]
    assert clip_for_key(frames, 1, 4) == [100, 101, 102, 103]
    assert clip_for_key([7, 8], 1, 4) == [7, 8, 8, 8]  # short video: repeat the last
    assert clip_for_key([7], 0, 4) == [7, 7, 7, 7]  # a DET image
    with pytest.raises(ValueError, match="outside a video"):
        clip_for_key(frames, 10, 4)
    with pytest.raises(ValueError, match="key_position must be one of"):
        clip_for_key(frames, 5, 4, "middle")


def test_random_clip_start_contains_the_key_frame():
    frames = list(range(100, 110))
    rng = np.random.default_rng(0)
    starts = set()
    for _ in range(200):
        c = clip_for_key(frames, 5, 4, "random", rng)
        assert 105 in c and c == list(range(c[0], c[0] + 4))
        starts.add(c[0])
    assert starts == {102, 103, 104, 105}
    assert clip_for_key(frames, 0, 4, "random", rng) == [100, 101, 102, 103]
    assert clip_for_key(frames, 9, 4, "random", rng) == [106, 107, 108, 109]
    with pytest.raises(ValueError, match="needs an rng"):
        clip_for_key(frames, 5, 4, "random")


def test_sampler_clips_end_at_their_key_frames_by_default():
    ds = FakeVID()
    inner = torch.utils.data.SequentialSampler(ds)
    inner.dataset = ds
    clips = [
        b[3 * c : 3 * c + 3]
        for b in ClipBatchSampler(inner, batch_size=2, clip_len=3)
        for c in range(len(b) // 3)
    ]
    got = [tuple(ds.entries[i] for i in clip) for clip in clips]
    # every entry is a key frame here, drawn in dataset order: "a" has 5 frames, "b" 3, "det" 1
    want = {
        ("a", 0): [0, 1, 2],
        ("a", 1): [0, 1, 2],
        ("a", 2): [0, 1, 2],
        ("a", 3): [1, 2, 3],
        ("a", 4): [2, 3, 4],
        ("b", 0): [0, 1, 2],
        ("b", 1): [0, 1, 2],
        ("b", 2): [0, 1, 2],
        ("det", 0): [0, 0, 0],
    }
    assert [[f for _, f in c] for c in got] == [want[k] for k in ds.entries]
    # the key frame is marked at its own place (a DET image: the last of its repeats)
    key_at = {
        ("a", 0): 0,
        ("a", 1): 1,
        ("a", 2): 2,
        ("a", 3): 2,
        ("a", 4): 2,
        ("b", 0): 0,
        ("b", 1): 1,
        ("b", 2): 2,
        ("det", 0): 2,  # the default repeated_key='last': the key after its own copies
    }
    assert [[isinstance(i, KeyFrameIndex) for i in c] for c in clips] == [
        [j == key_at[k] for j in range(3)] for k in ds.entries
    ]
    assert [c[key_at[k]] for c, k in zip(clips, ds.entries)] == list(range(len(ds)))
    assert all(len({v for v, _ in c}) == 1 and c[0][0] == k[0] for c, k in zip(got, ds.entries))
    with pytest.raises(ValueError, match="key_position must be one of"):
        ClipBatchSampler(inner, batch_size=2, clip_len=3, key_position="start")
    # repeated_key='first' (the older order): a DET image's key frame sits at the first of its
    # repeats (zeros through the causal shift); clips and every other key stay where they were
    first = ClipBatchSampler(inner, batch_size=9, clip_len=3, repeated_key="first")
    (flat,) = list(first)
    moved = [flat[i : i + 3] for i in range(0, len(flat), 3)]
    assert [list(map(int, c)) for c in moved] == [list(map(int, c)) for c in clips]
    assert [[isinstance(i, KeyFrameIndex) for i in c] for c in moved] == [
        [j == (0 if k == ("det", 0) else key_at[k]) for j in range(3)] for k in ds.entries
    ]
    with pytest.raises(ValueError, match=r"repeated_key must be one of \('first', 'last'\)"):
        ClipBatchSampler(inner, batch_size=2, clip_len=3, repeated_key="middle")


def test_a_key_frame_index_is_an_int_that_survives_pickling():
    key = pickle.loads(pickle.dumps(KeyFrameIndex(7)))  # as sent to data-loader workers
    assert isinstance(key, KeyFrameIndex) and key == 7 and [10, 11, 12][KeyFrameIndex(1)] == 11
    assert not isinstance(pickle.loads(pickle.dumps(7)), KeyFrameIndex)


@pytest.mark.parametrize("with_index", [False, True])
def test_batches_are_clips_of_consecutive_frames_of_one_video(with_index):
    ds = FakeVID(with_index=with_index)
    assert build_video_index(ds)["a"] == [ds.entries.index(("a", f)) for f in range(5)]
    inner = torch.utils.data.SequentialSampler(ds)
    inner.dataset = ds
    bs = ClipBatchSampler(inner, batch_size=2, clip_len=3, key_position="random", seed=1)
    batches = list(bs)
    assert len(batches) == len(bs) == 5  # 9 key frames, 2 clips per batch, last one partial
    keys = [k for b in batches for k in b[::3]]
    for b in batches:
        for c in range(len(b) // 3):
            clip = [ds.entries[i] for i in b[3 * c : 3 * c + 3]]
            assert len({v for v, _ in clip}) == 1
            ids = [f for _, f in clip]
            assert ids == list(range(ids[0], ids[0] + 3)) or clip[0][0] == "det"
    assert len(keys) == 9
    det = ds.entries.index(("det", 0))
    assert [det] * 3 in [b[i : i + 3] for b in batches for i in range(0, len(b), 3)]


def test_epochs_change_the_clip_starts_deterministically():
    ds = FakeVID()
    from mmengine.dataset import DefaultSampler

    a = ClipBatchSampler(
        DefaultSampler(ds, shuffle=False, seed=3), batch_size=9, clip_len=2, key_position="random"
    )
    b = ClipBatchSampler(
        DefaultSampler(ds, shuffle=False, seed=3), batch_size=9, clip_len=2, key_position="random"
    )
    assert list(a) == list(b)
    epochs = []
    for e in range(4):
        a.set_epoch(e)
        epochs.append(list(a))
    assert len({tuple(x[0]) for x in epochs}) > 1


def test_video_shards_cover_every_frame_once_with_whole_videos_in_order():
    ds = FakeVID()
    shards = [list(VideoShardSampler(ds, rank=r, world_size=2)) for r in range(2)]
    assert sorted(shards[0] + shards[1]) == list(range(len(ds)))
    owned = []
    for shard in shards:
        frames = [ds.entries[i] for i in shard]
        owned.append({v for v, _ in frames})
        for v in owned[-1]:  # whole videos, frames in order
            assert [f for w, f in frames if w == v] == list(range(VIDEOS[v]))
    assert not owned[0] & owned[1]
    assert sorted(len(s) for s in shards) == [4, 5]  # a (5) | b (3) + det (1)
    assert list(VideoShardSampler(ds)) == [i for i in VideoShardSampler(ds, rank=0, world_size=1)]
    with pytest.raises(ValueError, match="outside world_size"):
        VideoShardSampler(ds, rank=2, world_size=2)


class CountMetric(BaseMetric):
    """Counts predictions (stands in for VIDMetric)."""

    def process(self, data_batch, data_samples):
        for s in data_samples:
            self.results.append((s["video"], s["frame_id"], len(s["pred_instances"]["scores"])))

    def compute_metrics(self, results):
        return dict(frames=len(results), boxes=sum(r[2] for r in results))


def test_runner_trains_and_tests_a_tiny_clip_rfcn(tmp_path):
    model = tiny_cfg(t=2)
    model["data_preprocessor"] = dict(
        type="DetDataPreprocessor",
        mean=[128.0] * 3,
        std=[64.0] * 3,
        bgr_to_rgb=True,
        pad_size_divisor=16,
    )
    loader = dict(num_workers=0, collate_fn=dict(type="pseudo_collate"))
    runner = Runner(
        model=model,
        work_dir=str(tmp_path),
        default_scope="mmdet",
        train_dataloader=dict(
            dataset=FakeVID(),
            batch_size=2,
            sampler=dict(type="DefaultSampler", shuffle=True),
            batch_sampler=dict(type="ClipBatchSampler", clip_len=2),
            **loader,
        ),
        train_cfg=dict(type="IterBasedTrainLoop", max_iters=3, val_interval=100),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.01, momentum=0.9)),
        test_dataloader=dict(
            dataset=FakeVID(),
            batch_size=2,
            sampler=dict(type="DefaultSampler", shuffle=False),
            **loader,
        ),
        test_evaluator=[CountMetric()],
        test_cfg=dict(type="TestLoop"),
        default_hooks=dict(
            checkpoint=dict(type="CheckpointHook", interval=3, by_epoch=False),
            logger=dict(type="LoggerHook", interval=1),
        ),
        randomness=dict(seed=0),
    )
    runner.train()
    assert (tmp_path / "iter_3.pth").exists()
    metrics = runner.test()
    assert metrics["frames"] == sum(VIDEOS.values())
