"""The training configuration in sections: the flags ``tsm train`` had keep their names and
meaning, and configs written before the sections (flat, as older checkpoints and config.json
files hold them) read into the same config."""

import json

import pytest

from tsm_apps.train.cli import build_parser, config_from_args
from tsm_apps.train.config import TrainConfig, load_config, save_config

# asdict(TrainConfig()) as the flat config of 636c200 stored it (meta['train_config'],
# config.json), with the values a synthetic-preset run of the demo had
OLD_FLAT = {
    "data": "runs/demo/data/temporal",
    "train_list": "",
    "val_list": "",
    "work_dir": "runs/demo/recognizers/tsm",
    "arch": "resnet18",
    "width": 0.25,
    "output_stride": 16,
    "segments": 8,
    "shift": "offline",
    "fold_div": 8,
    "dropout": 0.5,
    "zero_init_residual": False,
    "num_classes": 0,
    "pretrained": "",
    "modality": "rgb",
    "new_length": 5,
    "size": 112,
    "min_area": 0.5,
    "crop": "area",
    "crop_scales": [1.0, 0.875, 0.75, 0.66],
    "flip": False,
    "scale_size": -1,
    "sampling": "tsn",
    "test_clips": 1,
    "test_crops": 1,
    "test_full_res": False,
    "cache": True,
    "workers": 0,
    "epochs": 15,
    "batch_size": 16,
    "accum_steps": 1,
    "lr_per_8": 0.0005,
    "lr_policy": "cosine",
    "lr_steps": [],
    "warmup_epochs": 1.0,
    "warmup_start": 0.1,
    "min_lr_ratio": 0.0,
    "optimizer": "adam",
    "momentum": 0.9,
    "nesterov": False,
    "weight_decay": 0.0001,
    "optim_policy": "tsm_apps",
    "fc_lr_mult": 5.0,
    "bn": "train",
    "clip_grad": 20.0,
    "amp": True,
    "channels_last": True,
    "device": "auto",
    "seed": 0,
    "eval_every": 1,
    "log_every": 0,
    "checkpoint_every": 0,
    "max_steps": 0,
    "progress": False,
    "tensorboard": True,
    "resume": False,
    "multigrid": {
        "enabled": False,
        "long_cycle": True,
        "short_cycle": True,
        "long_factors": [[0.25, 0.5**0.5], [0.5, 0.5**0.5], [0.5, 1.0], [1.0, 1.0]],
        "short_factors": [0.5, 0.5**0.5],
        "steps": [0, 94, 154, 196],
        "max_epoch": 239,
        "bn_base_size": 0,
        "scale_lr": True,
        "min_steps": 16,
        "epoch_factor": 1.5,
        "lr_policy": "step",
        "gamma": 0.1,
    },
    "averaging": {
        "method": "none",
        "k": 8,
        "b1": 1.0,
        "b2": 2,
        "batch_cap": 0,
        "adaptive_rule": "factor",
    },
}
DEMO_FLAGS = [
    "--data",
    "runs/demo/data/temporal",
    "--preset",
    "synthetic",
    "--shift",
    "offline",
    "--output-stride",
    "16",
    "--epochs",
    "15",
    "--seed",
    "0",
    "--no-progress",
    "--out",
    "runs/demo/recognizers/tsm",
]


def test_an_old_flat_config_reads_into_its_sections():
    cfg = TrainConfig.from_dict(OLD_FLAT)
    assert (cfg.data.path, cfg.model.arch, cfg.model.output_stride, cfg.data.scale_size) == (
        "runs/demo/data/temporal",
        "resnet18",
        16,
        -1,
    )
    assert (cfg.optim.epochs, cfg.optim.lr_per_8, cfg.test.clips, cfg.multigrid.min_steps) == (
        15,
        0.0005,
        1,
        16,
    )
    # the demo's command line gives the same config (the fields added since keep defaults)
    assert config_from_args(build_parser().parse_args(DEMO_FLAGS)) == cfg
    # and the sectioned form reads back unchanged
    assert TrainConfig.from_dict(json.loads(json.dumps(cfg.to_dict()))) == cfg
    assert sorted(cfg.to_dict()) == sorted(
        [
            "model",
            "data",
            "optim",
            "test",
            "multigrid",
            "averaging",
            "work_dir",
            "device",
            "seed",
            "eval_every",
            "log_every",
            "checkpoint_every",
            "max_steps",
            "progress",
            "tensorboard",
            "resume",
        ]
    )


def test_a_flat_config_file_and_flat_overrides_still_load(tmp_path):
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"batch_size": 4, "arch": "resnet18", "test_crops": 3}))
    cfg = load_config(path, preset="kinetics", lr_per_8=0.01)
    assert (cfg.optim.batch_size, cfg.model.arch, cfg.test.crops, cfg.optim.lr_per_8) == (
        4,
        "resnet18",
        3,
        0.01,
    )
    assert cfg.data.sampling == "dense"  # the preset below the file
    saved = save_config(cfg, tmp_path / "config.json")
    assert load_config(saved) == cfg


def test_unknown_and_bad_keys_name_their_section():
    with pytest.raises(ValueError, match=r"config: unknown keys \['bogus'\]"):
        TrainConfig.from_dict({"bogus": 1})
    with pytest.raises(ValueError, match=r"optim: unknown keys \['arch'\]"):
        TrainConfig.from_dict({"optim": {"arch": "resnet18"}})
    with pytest.raises(ValueError, match="optim: bn must be one of"):
        load_config(bn="half")


def test_the_help_shows_each_section_and_each_field():
    page = " ".join(build_parser().format_help().split())
    for heading in (
        "model:",
        "data:",
        "optimisation:",
        "test protocol (recorded in checkpoints):",
        "multigrid:",
        "K-step averaging:",
    ):
        assert heading in page
    # the help of fields whose words once lived only in comments
    assert "--scale-size SCALE_SIZE shorter side before validation's centre crop" in page
    assert "--accum-steps ACCUM_STEPS each process splits its share into this many" in page


def test_the_old_flags_keep_their_meaning():
    args = [
        "--data",
        "d",
        "--multigrid",
        "--mg-no-short-cycle",
        "--mg-no-scale-lr",
        "--mg-long-factors",
        "0.5,0.7071;1,1",
        "--averaging",
        "kavg",
        "--k",
        "-1",
        "--batch-cap",
        "64",
        "--lr-steps",
        "20,40",
        "--test-full-res",
        "--out",
        "w",
        "--workers",
        "2",
        "--no-flip",
        "--crop-scales",
        "1,0.5",
    ]
    cfg = config_from_args(build_parser().parse_args(args))
    mg, av = cfg.multigrid, cfg.averaging
    assert (mg.enabled, mg.short_cycle, mg.scale_lr, mg.long_factors) == (
        True,
        False,
        False,
        [[0.5, 0.7071], [1.0, 1.0]],
    )
    assert (av.method, av.k, av.batch_cap) == ("kavg", -1, 64)
    assert (cfg.optim.lr_steps, cfg.test.full_res, cfg.work_dir, cfg.data.workers) == (
        [20.0, 40.0],
        True,
        "w",
        2,
    )
    assert (cfg.data.flip, cfg.data.crop_scales) == (False, [1.0, 0.5])
    # a flag not given leaves the preset's value (flags < preset would be a bug)
    cfg = config_from_args(build_parser().parse_args(["--preset", "kinetics", "--data", "d"]))
    assert (cfg.data.flip, cfg.test.clips) == (True, 10)


def test_one_vocabulary_of_training_samplings():
    """The config's choices and the dataset's check read the same two names: TSN's segments and
    one dense window."""
    from tsm_apps.data import dataset, sampling
    from tsm_apps.train import sections

    assert sampling.TRAIN_SAMPLINGS == ("tsn", "dense")
    assert sections.TRAIN_SAMPLINGS is dataset.TRAIN_SAMPLINGS is sampling.TRAIN_SAMPLINGS
