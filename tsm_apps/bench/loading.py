"""``tsm bench loading``: the default training preset's loader vs its step (the ``loading`` entry
of the ``tsm.bench`` group).

The loader is the training one (:class:`~tsm_apps.data.dataset.VideoDataset` with decoded frames kept
in memory, as the preset does, behind a ``DataLoader`` with the configured workers); the step is
the preset's model forward + backward + optimiser step on one batch. Both are measured in clips
per second; the figure is their ratio (>= 1: the loader keeps up).
"""

from __future__ import annotations

import time
from functools import partial

import torch
from torch.utils.data import DataLoader

from ..data.dataset import VideoDataset
from ..data.transforms import train_transform
from ..models.recognizer import build_recognizer
from ..train.config import load_config
from .timing import Figure, load_average, time_one


def _videos(n: int, frames: int, size: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(0)
    return torch.randint(0, 256, (n, frames, size, size, 3), generator=g, dtype=torch.uint8)


def loader_rate(cfg, size: int, workers: int, batches: int) -> float:
    """Clips/s of the training ``DataLoader`` (after its first batch: workers started)."""
    videos = _videos(cfg.optim.batch_size * (batches + 1), 16, size)
    ds = VideoDataset.from_tensor(
        videos,
        [0] * len(videos),
        True,
        cfg.model.segments,
        size,
        transform=partial(
            train_transform, crop=cfg.data.crop, flip=cfg.data.flip, min_area=cfg.data.min_area
        ),
    )
    it = iter(DataLoader(ds, batch_size=cfg.optim.batch_size, num_workers=workers))
    next(it)
    t0 = time.perf_counter()
    for _ in range(batches):
        next(it)
    return cfg.optim.batch_size * batches / (time.perf_counter() - t0)


def step_rate(cfg, size: int, device: str, repeats: int) -> float:
    """Clips/s of the preset's training step (model, optimiser) on one batch."""
    torch.manual_seed(0)
    m = cfg.model
    model = build_recognizer(m.arch, 8, m.segments, m.shift, width=m.width, dropout=m.dropout).to(
        device
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    x = torch.randn(cfg.optim.batch_size, cfg.model.segments, 3, size, size, device=device)
    y = torch.zeros(cfg.optim.batch_size, dtype=torch.long, device=device)

    def step():
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    return cfg.optim.batch_size / time_one(step, repeats, 1, device)


def figures(quick: bool, device: str) -> list:
    """Loader / step throughput of the ``synthetic`` preset with default workers (and, in the
    full run, with 0, 1 and 2 workers at 112 and 224 px)."""
    cfg = load_config(None, "synthetic")
    load = load_average()
    detail: dict = {"workers_default": cfg.data.workers}
    step = step_rate(cfg, cfg.data.size, device, 3 if quick else 8)
    main = loader_rate(cfg, cfg.data.size, cfg.data.workers, 2 if quick else 6)
    detail.update(step_clips_per_s=step, load_clips_per_s=main)
    if not quick:
        for size in (112, 224):
            s = step if size == cfg.data.size else step_rate(cfg, size, device, 4)
            for w in (0, 1, 2):
                detail[f"ratio_{size}px_{w}w"] = loader_rate(cfg, size, w, 6) / s
    detail["load"] = [load, load_average()]
    r = main / step
    return [
        Figure(
            f"data loading: training loader / train-step consumption (synthetic preset, "
            f"{cfg.data.workers} workers)",
            r,
            "x",
            ">= 1 (loader keeps up)",
            r >= 1.0,
            device,
            detail,
        )
    ]
