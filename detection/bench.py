"""``tsm bench`` figures of the detector: online per-frame latency of TSM R-FCN against TSN R-FCN.

Both models come from the same config and seed (the shift adds no parameters, so the weights are
identical); each timed call is one frame through the whole detector (backbone, RPN, R-FCN head,
NMS) in streaming mode, the TSM one carrying its shift buffers from the previous frame. The two
are timed alternately in one process (:func:`tsm_apps.bench.timing.time_pair`, median after warm-up).
Quick mode: the small synthetic config on 160x128 frames (``tsm synth vid``'s size); full
mode: the paper's R-101 on 1000x600 frames (the test scale: shorter side 600). Weights are
random: the heads' time depends on the number of proposals, which the configs cap
(``max_per_img``).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import torch

from tsm_apps.bench.timing import time_pair

from .inference import CONFIG_DIR as CONFIGS

QUICK = ("rfcn_synth_tsm.py", (128, 160), 20, 3)  # config, (H, W), repeats, warm-up
FULL = ("rfcn_r101_vid_tsm_online.py", (600, 1000), 10, 2)


def _models(config: Path, device: str) -> tuple:
    from mmdet.registry import MODELS
    from mmengine.registry import init_default_scope

    import detection  # noqa: F401

    from .inference import load_config

    cfg = load_config(config)
    init_default_scope(cfg.get("default_scope", "mmdet"))
    models = []
    for shift in ("online", None):
        cfg.model.backbone.shift = shift
        torch.manual_seed(0)
        models.append(MODELS.build(cfg.model).to(device).eval())
    return tuple(models)


def _frame_step(model, size: tuple, device: str):
    """A closure that pushes one (preprocessed) frame through ``model``'s online stream."""
    from mmdet.structures import DetDataSample

    h, w = size
    rng = np.random.default_rng(0)
    img = torch.from_numpy(rng.integers(0, 256, (3, h, w), dtype=np.uint8)).float()
    sample = DetDataSample(
        metainfo=dict(
            img_shape=(h, w), ori_shape=(h, w), scale_factor=(1.0, 1.0), video="bench", frame_id=0
        )
    )
    data = model.data_preprocessor({"inputs": [img], "data_samples": [sample]}, False)
    inputs, samples = data["inputs"].to(device), data["data_samples"]
    counter = itertools.count()

    @torch.no_grad()
    def step():
        samples[0].set_metainfo(dict(frame_id=next(counter)))
        return model.predict(inputs, samples)

    return step


def figures(quick: bool, device: str) -> list[dict]:
    """Per-frame latency ratio online-TSM / TSN R-FCN (goal <= 1.05) and each model's frames
    per second, as :func:`tsm_apps.bench.cli.plugin_figure` dicts."""
    name, size, repeats, warmup = QUICK if quick else FULL
    tsm, tsn = _models(CONFIGS / name, device)
    ta, tb = time_pair(
        _frame_step(tsm, size, device), _frame_step(tsn, size, device), repeats, warmup, device
    )
    what = f"{'small synthetic' if quick else 'R-101'} R-FCN, {size[1]}x{size[0]}"
    stream = getattr(tsm, "_stream", None) or {}
    cache = sum(b.numel() * b.element_size() for b in stream.get("buffers") or [] if b is not None)
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
    ]
