"""The seeds' recipes as presets, and TSN's multi-scale crop for training clips."""
import torch

from tsm_apps.train.clips import multiscale_box
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


def test_multiscale_box_uses_tsn_scales_and_fixed_offsets():
    # 112 x 112 frames: sides int(112 * s) for s in (1, .875, .75, .66) = 112, 98, 84, 73;
    # pairs at most one scale apart; offsets on the 4 x 4 grid of (112 - side) // 4
    sides = [112, 98, 84, 73]
    g = torch.Generator().manual_seed(0)
    for _ in range(50):
        y, x, ch, cw = multiscale_box(112, 112, 64, g)
        assert ch in sides and cw in sides and abs(sides.index(ch) - sides.index(cw)) <= 1
        assert y % max((112 - ch) // 4, 1) == 0 and x % max((112 - cw) // 4, 1) == 0
        assert y + ch <= 112 and x + cw <= 112
