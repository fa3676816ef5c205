"""Group transforms: one crop/scale/flip for the whole clip, official geometry, exact values."""

import numpy as np
import pytest
import torch

from tsm_apps.data.crops import fixed_offsets
from tsm_apps.data.transforms import (
    Compose,
    GroupCenterCrop,
    GroupMultiScaleCrop,
    GroupRandomCrop,
    GroupRandomHorizontalFlip,
    GroupRandomResizedCrop,
    GroupScale,
    GroupViews,
    Normalize,
    ToTensor,
    train_transform,
)


class StubRng:
    def __init__(self, value=0, uniform=0.0):
        self.value, self.uniform = value, uniform

    def integers(self, low, high=None, size=None):
        return self.value

    def random(self):
        return self.uniform


def clip(t=4, h=60, w=80, seed=0):
    """Frame t = one random image + t: any transform applied identically keeps out[t] - out[0] == t."""
    base = np.random.default_rng(seed).integers(0, 200, (h, w, 3))
    return np.stack([base + i for i in range(t)]).astype(np.uint8)


def assert_same_for_every_frame(out, t=4, resized=False):
    """Crops and flips: exact. Resizing: float rounding may move a value at .5 by one."""
    d = out.astype(int) - out[:1].astype(int)
    for i in range(t):
        if resized:
            assert (abs(d[i] - i) <= 1).all() and (d[i] == i).mean() > 0.95, f"frame {i} differs"
        else:
            assert (d[i] == i).all(), f"frame {i} was transformed differently"


@pytest.mark.parametrize(
    "transform, resized",
    [
        (GroupMultiScaleCrop(32), True),
        (GroupMultiScaleCrop((24, 40), fix_crop=False), True),
        (GroupRandomCrop(30), False),
        (GroupCenterCrop((50, 50)), False),
        (GroupRandomHorizontalFlip(p=1.0), False),
        (GroupScale(30), True),
        (GroupScale((17, 23)), True),
        (Compose([GroupRandomCrop(50), GroupRandomHorizontalFlip()]), False),
    ],
)
def test_every_frame_gets_the_same_transform(transform, resized):
    for seed in range(5):
        out = transform(clip(), np.random.default_rng(seed))
        assert out.dtype == np.uint8 and out.shape[0] == 4
        assert_same_for_every_frame(out, resized=resized)


@pytest.mark.parametrize(
    "transform, k",
    [
        (GroupViews(40, 3), 3),
        (GroupViews(40, 10), 10),
        (GroupViews((60, 40), 3, "mmaction2"), 3),
        (GroupViews(40, 10, "mmaction2"), 10),
    ],
)
def test_multi_crop_keeps_frames_of_a_crop_contiguous(transform, k):
    out = transform(clip(), None)
    assert out.shape == (4 * k, *transform.size, 3)
    for c in range(k):
        assert_same_for_every_frame(out[4 * c : 4 * c + 4])


def test_multi_scale_crop_pairs_and_the_13_offsets():
    msc = GroupMultiScaleCrop(224)
    # shorter side 240: sides 240, 210, 180, 158 (none within 3 px of 224); |i - j| <= 1
    assert msc.crop_pairs(240, 320) == [
        (240, 240),
        (240, 210),
        (210, 240),
        (210, 210),
        (210, 180),
        (180, 210),
        (180, 180),
        (180, 158),
        (158, 180),
        (158, 158),
    ]
    assert GroupMultiScaleCrop(224).crop_pairs(256, 340)[0] == (256, 256)
    assert GroupMultiScaleCrop(224).crop_pairs(226, 300)[:2] == [(224, 224), (224, 197)]  # snap
    # (H - h) // 4 = 15, (W - w) // 4 = 27
    assert fixed_offsets(240, 320, 180, 210) == [
        (0, 0),
        (0, 108),
        (60, 0),
        (60, 108),
        (30, 54),
        (30, 0),
        (30, 108),
        (60, 54),
        (0, 54),
        (15, 27),
        (15, 81),
        (45, 27),
        (45, 81),
    ]
    assert len(fixed_offsets(240, 320, 180, 210, more=False)) == 5


def test_multi_scale_crop_content():
    frames = clip(t=2, h=60, w=80)
    out = GroupMultiScaleCrop(60)(frames, StubRng(0))  # pair (60, 60) at (0, 0): no resize
    np.testing.assert_array_equal(out, frames[:, :60, :60])
    out = GroupMultiScaleCrop(60)(frames, StubRng(1))  # pair (60, 52), offset upper right
    assert out.shape == (2, 60, 60, 3)
    np.testing.assert_array_equal(
        GroupMultiScaleCrop((60, 52))(frames, StubRng(1)), frames[:, :, 28:80]
    )


def test_flip_and_disabling_it():
    frames = clip()
    np.testing.assert_array_equal(
        GroupRandomHorizontalFlip(p=1.0)(frames, StubRng()), frames[:, :, ::-1]
    )
    assert GroupRandomHorizontalFlip(p=0.5)(frames, StubRng(uniform=0.7)) is frames
    assert GroupRandomHorizontalFlip(p=1.0, enabled=False)(frames, StubRng()) is frames
    flips = [
        GroupRandomHorizontalFlip()(frames, np.random.default_rng(s))[0, 0, 0, 0]
        != frames[0, 0, 0, 0]
        for s in range(40)
    ]
    assert 5 < sum(flips) < 35


def test_crop_positions():
    frames = clip(h=60, w=80)
    np.testing.assert_array_equal(GroupCenterCrop((20, 30))(frames), frames[:, 20:40, 25:55])
    np.testing.assert_array_equal(
        GroupRandomCrop((20, 30))(frames, StubRng(7)), frames[:, 7:27, 7:37]
    )
    # official: 3 = GroupFullResSample: x = 0, 4*ws, 2*ws with ws = (80 - 60) // 4 = 5, y = 0
    three = GroupViews(60, 3)(frames)
    for c, x in enumerate([0, 20, 10]):
        np.testing.assert_array_equal(three[4 * c : 4 * c + 4], frames[:, :, x : x + 60])
    # mmaction2 ThreeCrop: x = 0, 2*s, s with s = (80 - 60) // 2 = 10
    three = GroupViews(60, 3, "mmaction2")(frames)
    for c, x in enumerate([0, 20, 10]):
        np.testing.assert_array_equal(three[4 * c : 4 * c + 4], frames[:, :, x : x + 60])
    # 10 = each of the quarter-grid corners and centre followed by its mirror (steps 5, 10)
    ten = GroupViews(40, 10)(frames)
    np.testing.assert_array_equal(ten[:4], frames[:, :40, :40])
    np.testing.assert_array_equal(ten[4:8], frames[:, :40, :40][:, :, ::-1])
    np.testing.assert_array_equal(ten[32:36], frames[:, 10:50, 20:60])
    np.testing.assert_array_equal(ten, GroupViews(40, 10, "mmaction2")(frames))
    # centre crop of 21 from 80: official rounds (80 - 21) / 2 = 29.5 to 30 (Python: to even),
    # mmaction2 floors to 29
    np.testing.assert_array_equal(GroupCenterCrop((60, 21))(frames), frames[:, :, 30:51])
    np.testing.assert_array_equal(
        GroupCenterCrop((60, 21), "mmaction2")(frames), frames[:, :, 29:50]
    )
    with pytest.raises(ValueError, match="does not fit frames of 60x80"):
        GroupCenterCrop(70)(frames)


def test_scale_shorter_side():
    assert GroupScale(30)(clip(h=60, w=80), None).shape == (4, 30, 40, 3)
    assert GroupScale(30)(clip(h=80, w=60), None).shape == (4, 40, 30, 3)
    assert GroupScale(7)(clip(h=60, w=80), None).shape == (4, 7, 9, 3)  # int(7 * 80 / 60)
    flat = np.full((2, 10, 20, 3), 77, np.uint8)
    assert (GroupScale(5)(flat) == 77).all()


def test_to_tensor_and_normalize_exact():
    frames = clip(t=2, h=3, w=5)
    x = ToTensor()(frames)
    assert x.dtype == torch.float32 and x.shape == (2, 3, 3, 5)
    assert torch.equal(x[1, 2, 0, 4] * 255, torch.tensor(float(frames[1, 0, 4, 2])))
    y = Normalize((0.5, 0.25, 0.0), (0.5, 0.25, 2.0))(torch.ones(1, 3, 1, 1))
    assert torch.equal(y.flatten(), torch.tensor([1.0, 3.0, 0.5]))
    with pytest.raises(ValueError, match="3 mean / 3 std values for 4 channels"):
        Normalize()(torch.ones(2, 4, 3, 3))
    with pytest.raises(ValueError, match=r"uint8 frames \(N, H, W, 3\)"):
        ToTensor()(frames.astype(np.float32))


def test_standard_pipelines_and_seed_determinism():
    frames = clip(t=3, h=64, w=86)
    for crop in ("multiscale", "area"):
        tr = train_transform(56, crop)
        a = tr(frames, np.random.default_rng(1))
        assert a.shape == (3, 3, 56, 56) and a.dtype == torch.float32
        assert torch.equal(a, tr(frames, np.random.default_rng(1)))
        assert not all(torch.equal(a, tr(frames, np.random.default_rng(s))) for s in range(2, 6))
    with pytest.raises(ValueError, match="crop must be one of"):
        train_transform(56, "corners")


def test_random_resized_crop_box_covers_min_area_to_all():
    crop = GroupRandomResizedCrop(32, min_area=0.5)
    for seed in range(40):
        y, x, h, w = crop.box(60, 80, np.random.default_rng(seed))
        assert 0.5 * 4800 * 0.95 <= h * w <= 4800 and 0 <= y <= 60 - h and 0 <= x <= 80 - w
