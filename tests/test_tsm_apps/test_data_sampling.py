"""TSN segment samplers: exact indices (hand-computed from the official formulas, 0-based)."""

import numpy as np
import pytest

from tsm_apps.data.sampling import (
    dense_sample,
    dense_sample_test,
    make_sampler,
    sample_multi_clip,
    sample_test,
    sample_train,
    sample_twice,
    sample_val,
)


class StubRng:
    """Returns ``value`` for every draw (the top of the range when value is None)."""

    def __init__(self, value=None):
        self.value, self.calls = value, []

    def integers(self, low, high=None, size=None):
        self.calls.append((low, high, size))
        top = (low if high is None else high) - 1
        v = top if self.value is None else self.value
        return np.full(size, v, np.int64) if size is not None else v


def eq(a, b):
    assert a.dtype == np.int64
    np.testing.assert_array_equal(a, np.array(b, np.int64))


def test_train_offsets_inside_equal_segments():
    # 250 frames, 8 segments: d = 31; offset 0 -> segment starts, offset 30 -> segment ends
    eq(sample_train(250, 8, StubRng(0)), [0, 31, 62, 93, 124, 155, 186, 217])
    eq(sample_train(250, 8, StubRng()), [30, 61, 92, 123, 154, 185, 216, 247])
    rng = StubRng(0)
    sample_train(250, 8, rng)
    assert rng.calls == [(31, None, 8)]


def test_train_random_offsets_stay_in_their_segment_and_follow_the_seed():
    for seed in range(20):
        idx = sample_train(250, 8, np.random.default_rng(seed))
        assert idx.shape == (8,)
        assert ((idx // 31) == np.arange(8)).all()
    a = sample_train(250, 8, np.random.default_rng(0))
    np.testing.assert_array_equal(a, sample_train(250, 8, np.random.default_rng(0)))
    assert any((sample_train(250, 8, np.random.default_rng(s)) != a).any() for s in range(1, 5))


def test_train_short_videos_follow_the_official_code():
    eq(sample_train(8, 8, StubRng(0)), list(range(8)))  # d = 1
    eq(sample_train(5, 8, StubRng(0)), [0] * 8)  # d = 0 -> zeros
    eq(sample_train(17, 8, StubRng(1)), [1, 3, 5, 7, 9, 11, 13, 15])  # d = 2, frame 16 unused


def test_val_centres_and_short_video_zeros():
    eq(sample_val(10, 4), [1, 3, 6, 8])  # tick 2.5: int(1.25 + 2.5 i)
    eq(sample_val(250, 8), [15, 46, 78, 109, 140, 171, 203, 234])
    eq(sample_val(4, 4), [0, 0, 0, 0])  # num_frames <= T: zeros (official)
    eq(sample_val(3, 8), [0] * 8)


def test_test_centres_for_every_length():
    eq(sample_test(10, 4), [1, 3, 6, 8])
    eq(sample_test(4, 4), [0, 1, 2, 3])
    eq(sample_test(3, 8), [0, 0, 0, 1, 1, 2, 2, 2])  # tick 0.375


def test_twice_is_centres_then_starts():
    eq(sample_twice(10, 4), [1, 3, 6, 8, 0, 2, 5, 7])


def test_multi_clip_spreads_offsets_inside_segments():
    eq(sample_multi_clip(10, 4, 2), [0, 3, 5, 8, 1, 4, 6, 9])  # offsets tick/4, 3 tick/4
    eq(sample_multi_clip(10, 4, 1), sample_test(10, 4))
    # floor((6 i + 2 k + 1) / 7) exactly: clip 1, i = 3 is 21 / 7 = 3 (float arithmetic gives 2)
    eq(sample_multi_clip(6, 7, 3), [0, 1, 1, 2, 3, 4, 5, 0, 1, 2, 3, 3, 4, 5, 0, 1, 2, 3, 4, 5, 5])
    with pytest.raises(ValueError, match="num_clips"):
        sample_multi_clip(10, 4, 0)


def test_dense_train_window_stride_and_start():
    # 100 frames: p = 37 start positions, stride 64 // 8 = 8, start drawn from [0, 36)
    rng = StubRng(5)
    eq(dense_sample(100, 8, rng), [5, 13, 21, 29, 37, 45, 53, 61])
    assert rng.calls == [(0, 36, None)]
    eq(dense_sample(100, 8, StubRng()), [35 + 8 * i for i in range(8)])
    # short video: start 0 and indices wrap around
    eq(dense_sample(20, 8, StubRng(3)), [0, 8, 16, 4, 12, 0, 8, 16])
    eq(dense_sample(100, 4, StubRng(0), window=16), [0, 4, 8, 12])


def test_dense_test_ten_clips_evenly_spaced():
    idx = dense_sample_test(100, 8)
    assert idx.shape == (80,)
    starts = [0, 4, 8, 12, 16, 20, 24, 28, 32, 36]  # linspace(0, 36, 10)
    eq(idx, [s + 8 * i for s in starts for i in range(8)])
    eq(dense_sample_test(20, 8, num_clips=2), [0, 8, 16, 4, 12, 0, 8, 16] * 2)


def test_bad_arguments_raise():
    for bad in [(0, 8), (10, 0), (-1, 3)]:
        with pytest.raises(ValueError, match="must be an integer >= 1"):
            sample_test(*bad)
    with pytest.raises(ValueError, match="window"):
        dense_sample(100, 8, StubRng(0), window=4)


def test_make_sampler_dispatch():
    rng = np.random.default_rng(0)
    eq(make_sampler("val", 4)(10, rng), [1, 3, 6, 8])
    eq(make_sampler("test", 4)(10, None), [1, 3, 6, 8])
    eq(make_sampler("test", 4, twice=True)(10, None), [1, 3, 6, 8, 0, 2, 5, 7])
    eq(make_sampler("test", 4, num_clips=2)(10, None), [0, 3, 5, 8, 1, 4, 6, 9])
    assert make_sampler("test", 8, dense=True)(100, None).shape == (80,)
    eq(make_sampler("train", 8)(250, StubRng(0)), [0, 31, 62, 93, 124, 155, 186, 217])
    eq(make_sampler("train", 8, dense=True)(100, StubRng(5)), [5 + 8 * i for i in range(8)])
    with pytest.raises(ValueError, match="mode"):
        make_sampler("eval", 8)
    with pytest.raises(ValueError, match="only"):
        make_sampler("train", 8, twice=True)
    with pytest.raises(ValueError, match="one of"):
        make_sampler("test", 8, twice=True, num_clips=3)


def test_random_samplers_refuse_a_missing_generator():
    with pytest.raises(ValueError, match="sample_train needs a numpy Generator"):
        make_sampler("train", 8)(250, None)
