"""``tsm bench`` figures of the detector: online TSM R-FCN against TSN R-FCN, per frame at test
time and per step in training.

Both models come from the same config and seed (the shift adds no parameters, so the weights are
identical), and the two are timed alternately in one process
(:func:`tsm_apps.bench.timing.time_pair`, median after warm-up), eagerly on both sides.

* Per frame: one frame through the whole detector (backbone, RPN, R-FCN head, NMS) in streaming
  mode, the TSM one carrying its shift buffers from the previous frame.
* Training step: what mmengine's runner does for one iteration, ``model.train_step`` with the
  config's optimiser wrapper (data preprocessor, forward of one clip of ``T`` frames
  ``(T, 3, H, W)``, the losses on its last (key) frame, backward, gradient clipping, update)
  at learning rate 0 (:class:`TrainingStep`), on a fixed clip of random frames with two
  ground-truth boxes a frame.

Quick mode: the small synthetic config on 160x128 frames (``tsm synth vid``'s size); full
mode: the paper's R-101 on 1000x600 frames (the test scale: shorter side 600). Weights are
random: the heads' time depends on the number of proposals, which the configs cap
(``max_per_img``; in training the samplers' ``num``).
"""

from __future__ import annotations

import copy
import itertools
from pathlib import Path

import numpy as np
import torch

from tsm_apps.bench.timing import time_pair

from .inference import CONFIG_DIR as CONFIGS

QUICK = ("rfcn_synth_tsm.py", (128, 160), 20, 3)  # config, (H, W), repeats, warm-up
FULL = ("rfcn_r101_vid_tsm_online.py", (600, 1000), 10, 2)
TRAIN_QUICK = (20, 3)  # training steps timed, warm-up steps
TRAIN_FULL = (6, 2)


def bench_config(config: Path):
    """The mmengine ``Config`` of the file ``config``, with mmdet's registry scope set."""
    from mmengine.registry import init_default_scope

    import detection  # noqa: F401

    from .inference import load_config

    cfg = load_config(config)
    init_default_scope(cfg.get("default_scope", "mmdet"))
    return cfg


def twin_models(cfg, device: str) -> tuple:
    """The online-TSM and the TSN model of ``cfg``, same seed, in training mode on ``device``."""
    from mmdet.registry import MODELS

    models = []
    for shift in ("online", None):
        cfg.model.backbone.shift = shift
        torch.manual_seed(0)
        models.append(MODELS.build(cfg.model).to(device))
    return tuple(models)


def _random_frame(rng: np.random.Generator, size: tuple) -> torch.Tensor:
    h, w = size
    return torch.from_numpy(rng.integers(0, 256, (3, h, w), dtype=np.uint8))


def _sample(size: tuple, frame_id: int, **meta):
    """The data sample of frame ``frame_id`` of the bench's video, at its original size."""
    from mmdet.structures import DetDataSample

    h, w = size
    return DetDataSample(
        metainfo=dict(
            img_shape=(h, w),
            ori_shape=(h, w),
            scale_factor=(1.0, 1.0),
            video="bench",
            frame_id=frame_id,
            **meta,
        )
    )


def frame_step(model, size: tuple, device: str):
    """A closure that pushes one (preprocessed) frame through ``model``'s online stream."""
    img = _random_frame(np.random.default_rng(0), size).float()
    sample = _sample(size, 0)
    data = model.data_preprocessor({"inputs": [img], "data_samples": [sample]}, False)
    inputs, samples = data["inputs"].to(device), data["data_samples"]
    counter = itertools.count()

    @torch.no_grad()
    def step():
        samples[0].set_metainfo(dict(frame_id=next(counter)))
        return model.predict(inputs, samples)

    return step


def training_clip(model, size: tuple, num_classes: int) -> dict:
    """One training batch of ``model`` as the runner's loader gives it: ``model.clip_len`` random
    uint8 frames ``(3, H, W)`` of one video, the last marked as the clip's key frame, each with
    two ground-truth boxes of classes ``0`` and ``num_classes - 1``."""
    from mmengine.structures import InstanceData

    h, w = size
    rng = np.random.default_rng(0)
    t = model.clip_len
    inputs, samples = [], []
    for i in range(t):
        inputs.append(_random_frame(rng, size))
        sample = _sample(size, i, clip_key=i == t - 1)
        boxes = [[0.1 * w, 0.2 * h, 0.5 * w, 0.7 * h], [0.45 * w, 0.3 * h, 0.9 * w, 0.9 * h]]
        sample.gt_instances = InstanceData(
            bboxes=torch.tensor(boxes), labels=torch.tensor([0, num_classes - 1])
        )
        samples.append(sample)
    return {"inputs": inputs, "data_samples": samples}


class TrainingStep:
    """One training iteration of ``model`` as mmengine's runner runs it (module docstring), on
    :func:`training_clip`, with the optimiser wrapper of ``cfg`` at learning rate 0: the update
    runs in full (its cost does not depend on the rate), and every timed step sees the same
    weights, so the same proposals (random weights would otherwise drift from step to step)."""

    def __init__(self, model, cfg, size: tuple) -> None:
        from mmengine.optim import build_optim_wrapper

        wrapper = copy.deepcopy(cfg.optim_wrapper)
        wrapper.optimizer.lr = 0.0
        self.model, self.optim_wrapper = model, build_optim_wrapper(model, wrapper)
        self.data = training_clip(model, size, cfg.model.roi_head.bbox_head.num_classes)
        model.train()

    def __call__(self) -> dict:
        return self.model.train_step(self.data, self.optim_wrapper)


def training_figure(cfg, size: tuple, quick: bool, device: str) -> dict:
    """TSM/TSN time of one training iteration (goal <= 1.05, the recognizers' step goal)."""
    tsm, tsn = twin_models(cfg, device)
    repeats, warmup = TRAIN_QUICK if quick else TRAIN_FULL
    ta, tb = time_pair(
        TrainingStep(tsm, cfg, size), TrainingStep(tsn, cfg, size), repeats, warmup, device
    )
    return {
        "name": f"detection training step: TSM/TSN R-FCN ({_what(quick, size)}, "
        f"1 clip of {tsm.clip_len} frames, eager)",
        "ratio": ta / tb,
        "unit": "x",
        "goal": "<= 1.05",
        "tsm_ms": ta * 1e3,
        "tsn_ms": tb * 1e3,
    }


def _what(quick: bool, size: tuple) -> str:
    return f"{'small synthetic' if quick else 'R-101'} R-FCN, {size[1]}x{size[0]}"


def figures(quick: bool, device: str) -> list[dict]:
    """Per-frame latency ratio online-TSM / TSN R-FCN (goal <= 1.05), each model's frames
    per second, and the training step's ratio, as :func:`tsm_apps.bench.cli.plugin_figure`
    dicts."""
    name, size, repeats, warmup = QUICK if quick else FULL
    cfg = bench_config(CONFIGS / name)
    tsm, tsn = (m.eval() for m in twin_models(cfg, device))
    ta, tb = time_pair(
        frame_step(tsm, size, device), frame_step(tsn, size, device), repeats, warmup, device
    )
    what = _what(quick, size)
    cache = tsm.test_stream.cache_bytes
    return [
        {
            "name": f"detection online per-frame latency: TSM/TSN ({what})",
            "ratio": ta / tb,
            "unit": "x",
            "goal": "<= 1.05",
            "tsm_ms": ta * 1e3,
            "tsn_ms": tb * 1e3,
        },
        {
            "name": f"detection online TSM R-FCN frames/s ({what})",
            "value": 1.0 / ta,
            "unit": "fps",
            "ms": ta * 1e3,
            "shift_cache_bytes": cache,
        },
        {
            "name": f"detection TSN R-FCN frames/s ({what})",
            "value": 1.0 / tb,
            "unit": "fps",
            "ms": tb * 1e3,
        },
        training_figure(cfg, size, quick, device),
    ]
