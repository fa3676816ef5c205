"""The seeds' recipes as presets, and TSN's multi-scale crop for training clips."""

import numpy as np

from tsm_apps.data.transforms import GroupMultiScaleCrop
from tsm_apps.train.config import load_config


def test_kinetics_preset_is_the_15_minute_recipe_on_dense_clips():
    cfg = load_config(preset="kinetics")
    o, d, m, t = cfg.optim, cfg.data, cfg.model, cfg.test
    assert (o.epochs, o.lr_per_8, o.warmup_epochs, o.lr_policy) == (100, 0.00125, 5.0, "cosine")
    assert (o.optimizer, o.momentum, o.weight_decay, o.batch_size) == ("sgd", 0.9, 1e-4, 8)
    assert (d.crop, d.size, m.arch, m.segments) == ("multiscale", 224, "resnet50", 8)
    assert (d.sampling, d.flip, t.clips, t.crops, t.full_res) == ("dense", True, 10, 3, True)


def test_official_preset_is_the_official_kinetics_script():
    cfg = load_config(preset="official")
    o, d, m = cfg.optim, cfg.data, cfg.model
    # --lr 0.02 --batch-size 128 --epochs 50 --dropout 0.5 --gd 20 --wd 1e-4 --shift_div 8
    assert o.lr_per_8 * o.batch_size / 8 == 0.02
    assert (o.epochs, m.dropout, o.clip_grad, o.weight_decay, m.fold_div) == (
        50,
        0.5,
        20.0,
        1e-4,
        8,
    )
    assert (o.lr_policy, o.lr_steps, o.optim_policy, d.flip, d.sampling) == (
        "step",
        [20, 40],
        "tsm_official",
        True,
        "tsn",
    )
    flow = load_config(preset="official-flow")
    assert (flow.model.modality, flow.model.new_length, flow.data.crop_scales, flow.data.flip) == (
        "flow",
        5,
        [1.0, 0.875, 0.75],
        True,
    )


def test_multiscale_crop_uses_tsn_scales_and_fixed_offsets():
    # 112 x 112 frames: sides int(112 * s) for s in (1, .875, .75, .66) = 112, 98, 84, 73;
    # pairs at most one scale apart; offsets on the 4 x 4 grid of (112 - side) // 4
    sides = [112, 98, 84, 73]
    frames = np.arange(112 * 112 * 3, dtype=np.int64).reshape(1, 112, 112, 3) % 251
    crop = GroupMultiScaleCrop(112)
    crop.size = (112, 112)
    for seed in range(50):
        pairs = crop.crop_pairs(112, 112)
        assert all(abs(sides.index(h) - sides.index(w)) <= 1 for h, w in pairs)
        out = GroupMultiScaleCrop((112, 112))(frames.astype(np.uint8), np.random.default_rng(seed))
        assert out.shape == (1, 112, 112, 3)


def test_the_flow_preset_reaches_the_augmentation():
    from tsm_apps.train.run import train_augmentation

    t = train_augmentation(load_config(preset="official-flow"))(224)
    crop, flip = t.transforms[0], t.transforms[1]
    assert isinstance(crop, GroupMultiScaleCrop) and crop.scales == (1.0, 0.875, 0.75)
    assert flip.enabled and flip.p == 0.5
    # a mirrored flow clip: columns reversed, x fields inverted (255 - x), y kept
    frames = np.arange(2 * 4 * 6 * 2, dtype=np.uint8).reshape(2, 4, 6, 2)
    rng = next(
        np.random.default_rng(s) for s in range(100) if np.random.default_rng(s).random() < 0.5
    )
    out = flip(frames, rng)
    assert np.array_equal(out[..., 0], 255 - frames[:, :, ::-1, 0])
    assert np.array_equal(out[..., 1], frames[:, :, ::-1, 1])


def test_the_synthetic_preset_tests_on_whole_frames_at_any_size():
    # the generator's frames are square: validation and the recorded test protocol scale the
    # shorter side to the crop size, so the centre crop is the whole frame (no zoom)
    for overrides, side in (({}, 112), ({"size": 64}, 64)):
        proto = load_config(preset="synthetic", **overrides).test_protocol()
        assert (proto.scale_size, proto.crop_size, proto.clips, proto.crops) == (side, side, 1, 1)
    # the default (0) keeps the official 256/224 ratio: 64 -> 73, then a centre crop of 64
    proto = load_config(preset="synthetic", size=64, scale_size=0).test_protocol()
    assert (proto.scale_size, proto.crop_size) == (73, 64)
