"""The data-path benchmark (``tsm bench --device cuda datapath``) at its tiny CPU setting, the
loader it times being the trainer's own, and normalising on the device giving the model the
batch the workers would have given it, bit for bit."""

from dataclasses import replace

import numpy as np
import pytest
import torch

from tsm_apps.bench.data_path import VARIANTS, bench_trainer, figures
from tsm_apps.bench.data_path_setting import tiny_setting, write_videos
from tsm_apps.bench.timing import Figure
from tsm_apps.data.dataset import VideoDataset
from tsm_apps.data.decoder import set_decode_threads
from tsm_apps.data.lists import read_tsm_list
from tsm_apps.data.normalization import normalize_uint8
from tsm_apps.data.video import read_video_frames
from tsm_apps.distributed import DistEnv
from tsm_apps.train.cli import build_parser, config_from_args
from tsm_apps.train.config import load_config
from tsm_apps.train.loader import DECODE_THREADS, PREFETCH, train_loader
from tsm_apps.train.run import train_augmentation
from tsm_apps.train.trainer import Trainer

MEAN = np.array([0.485, 0.456, 0.406], np.float32).reshape(3, 1, 1)  # ImageNet, torchvision
STD = np.array([0.229, 0.224, 0.225], np.float32).reshape(3, 1, 1)


def test_the_figure_runs_end_to_end_at_the_tiny_setting():
    (f,) = figures(False, "cpu", replace(tiny_setting(), variants=True))
    assert isinstance(f, Figure) and f.device == "cpu" and f.goal == ">= 0.9"
    d = f.detail
    assert d["loaded_clips_per_s"] > 0 and d["tensor_clips_per_s"] > 0
    assert f.value == pytest.approx(d["loaded_clips_per_s"] / d["tensor_clips_per_s"])
    assert (
        d["workers"],
        d["pin_memory"],
        d["prefetch_factor"],
        d["persistent_workers"],
        d["decode_threads"],
    ) == (1, False, PREFETCH, False, DECODE_THREADS)
    assert d["normalize"] == "worker" and d["clip_dtype"] == "float32"  # auto on the CPU
    assert d["normalize_device_vs_worker_max_abs"] == 0.0
    assert set(d["clip_ms_in_process"]) == {"worker", "device"}
    assert {"wait_fraction", "load", "video_kbps", "timed_steps", "frames"} <= set(d)
    assert len(d["load"]) == 2 and d["videos"] == (1 + 2 + 2) * 2 and d["loaded_steps"] == 2
    assert all(d[f"ratio_{name}"] > 0 for name in VARIANTS)


def test_the_default_figure_is_cuda_only():
    assert figures(True, "cpu") == []


def test_the_bench_trains_through_the_trainers_loader(tmp_path):
    s = tiny_setting()
    write_videos(tmp_path, s)
    records = read_tsm_list(tmp_path / "train.txt")
    assert len(records) == s.train_videos and len(read_tsm_list(tmp_path / "val.txt")) == 2
    assert records[3].path.parent.parent == tmp_path / "videos"  # class folders
    frames = read_video_frames(records[3].path, [0, 5, s.frames - 1])
    assert frames.shape == (3, 48, 64, 3)  # larger than the 32 px crop
    set_decode_threads(1)  # as in a loader's worker: the same frames
    try:
        assert np.array_equal(read_video_frames(records[3].path, [0, 5, s.frames - 1]), frames)
    finally:
        set_decode_threads(0)
    with pytest.raises(ValueError, match="decoder threads must be >= 0, got -1"):
        set_decode_threads(-1)
    trainer = bench_trainer(s, tmp_path, "cpu", "device")
    loader = trainer.epoch_loader()
    assert type(trainer) is Trainer and type(trainer.train_set) is VideoDataset
    assert trainer.net.training and trainer.device == torch.device("cpu")
    assert loader.dataset is trainer.train_set and loader.batch_sampler is trainer.batches
    assert (loader.num_workers, loader.pin_memory, loader.prefetch_factor) == (1, False, PREFETCH)
    ds = trainer.train_set
    assert ds.frames is None and ds.sampling == "dense" and ds.records == records  # kinetics
    assert (trainer.cfg.model.arch, trainer.cfg.model.segments, trainer.cfg.data.crop) == (
        "resnet18",
        4,
        "multiscale",
    )
    x, y = next(iter(loader))
    assert x.dtype == torch.uint8 and x.shape == (2, 4, 3, 32, 32) and y.shape == (2,)


def test_a_cuda_loader_pins_memory_and_prefetches():
    ds = VideoDataset.from_tensor(torch.zeros(2, 4, 8, 8, 3, dtype=torch.uint8), [0, 1], True, 2, 8)
    loader = train_loader(ds, [[0, 1]], 2, torch.device("cuda", 0))
    assert (loader.pin_memory, loader.prefetch_factor, loader.persistent_workers) == (
        True,
        PREFETCH,
        False,
    )
    assert train_loader(ds, [[0, 1]], 0, "cpu").pin_memory is False


def _trainer_input(normalize_on: str) -> tuple:
    """The first batch of a tiny run as the loader gives it and as the model sees it."""
    cfg = load_config(
        preset="synthetic",
        arch="resnet18",
        width=0.125,
        segments=4,
        size=32,
        batch_size=4,
        crop="multiscale",
        flip=True,
        device="cpu",
        progress=False,
    )
    g = torch.Generator().manual_seed(0)
    videos = torch.randint(0, 256, (8, 12, 40, 48, 3), generator=g, dtype=torch.uint8)
    ds = VideoDataset.from_tensor(
        videos, list(range(8)), True, 4, 32, transform=train_augmentation(cfg, normalize_on)
    )
    trainer = Trainer(cfg, DistEnv(), torch.device("cpu"), ds, ds, 8, hooks=[])
    seen = []
    trainer.net.register_forward_pre_hook(lambda m, args: seen.append(args[0].clone()))
    x, y = next(iter(trainer.epoch_loader()))
    trainer.train_step(x, y)
    return x, seen[0]


def test_normalising_on_the_device_gives_the_model_the_same_batch():
    x_worker, seen_worker = _trainer_input("worker")
    x_device, seen_device = _trainer_input("device")
    assert x_worker.dtype == torch.float32 and x_device.dtype == torch.uint8
    assert torch.equal(seen_worker, x_worker)
    assert torch.equal(seen_device, seen_worker)  # bit for bit, not within a tolerance
    # an independent reference: numpy's float32 (IEEE) arithmetic on the uint8 clips
    ref = (x_device.numpy().astype(np.float32) / np.float32(255) - MEAN) / STD
    assert np.array_equal(seen_device.numpy(), ref)


def test_normalize_uint8_of_flow_and_bad_input():
    x = torch.tensor([0, 1, 127, 128, 254, 255] * 2, dtype=torch.uint8).reshape(1, 2, 2, 3)
    want = (x.numpy().astype(np.float32) / np.float32(255) - np.float32(0.5)) / np.float32(0.226)
    assert np.array_equal(normalize_uint8(x, "flow").numpy(), want)
    with pytest.raises(ValueError, match=r"uint8 tensor \(\.\.\., C, H, W\), got torch.float32"):
        normalize_uint8(x.float())


def test_the_normalize_option():
    cfg = config_from_args(build_parser().parse_args(["--data", "d", "--normalize", "device"]))
    assert cfg.data.normalize == "device" and cfg.data.normalize_on("cpu") == "device"
    auto = load_config().data
    assert (auto.normalize, auto.normalize_on("cuda:0"), auto.normalize_on("cpu")) == (
        "auto",
        "device",
        "worker",
    )
    with pytest.raises(ValueError, match="data: normalize must be one of"):
        load_config(normalize="gpu")
