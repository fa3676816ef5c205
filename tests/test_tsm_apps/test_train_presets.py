"""The seeds' recipes as presets, and TSN's multi-scale crop for training clips."""
import numpy as np

from tsm_apps.data.transforms import GroupMultiScaleCrop
from tsm_apps.train.config import load_config


def test_kinetics_preset_is_the_15_minute_recipe():
    cfg = load_config(preset="kinetics")
    assert (cfg.epochs, cfg.lr_per_8, cfg.warmup_epochs, cfg.dropout) == (100, 0.00125, 5.0, 0.0)
    assert (cfg.optimizer, cfg.momentum, cfg.weight_decay, cfg.batch_size) == ("sgd", 0.9, 1e-4, 8)
    assert (cfg.crop, cfg.size, cfg.arch, cfg.segments) == ("multiscale", 224, "resnet50", 8)


def test_official_preset_is_the_official_kinetics_script():
    cfg = load_config(preset="official")
    # --lr 0.02 --batch-size 128 --epochs 50 --dropout 0.5 --gd 20 --wd 1e-4 --shift_div 8
    assert cfg.lr_per_8 * cfg.batch_size / 8 == 0.02
    assert (cfg.epochs, cfg.dropout, cfg.clip_grad, cfg.weight_decay, cfg.fold_div) == \
        (50, 0.5, 20.0, 1e-4, 8)


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
