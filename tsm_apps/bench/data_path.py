"""``tsm bench datapath``: does ``tsm train`` on video files keep one GPU busy? (the
``datapath`` entry of the ``tsm.bench`` group)

A small Kinetics-like set of mp4 files is written to a temporary folder
(:func:`~tsm_apps.bench.data_path_setting.write_videos`).

The run is ``tsm train``'s own: :func:`~tsm_apps.train.inputs.check_inputs`,
:func:`~tsm_apps.train.run.clip_sets` (decoding per clip, no cache: a Kinetics-sized set does
not fit in memory) and the :class:`~tsm_apps.train.trainer.Trainer` of the ``kinetics``
preset (TSM ResNet-50, 8 segments, 224 px, dense sampling, multi-scale crop, batch 8), without
hooks; batches come from :meth:`Trainer.epoch_loader` (:mod:`tsm_apps.train.loader`) and each
is one :meth:`~tsm_apps.train.trainer.Trainer.train_step`. Clips per second
of that step (a) fed by the loader and (b) on one batch already on the device; the figure is
(a) / (b). Both are blocks of consecutive steps between two synchronisations, after warm-up
(workers started and their first batches taken, first steps run); (b) is measured before and
after (a), its rate the mean of the two. The full run (not ``quick``) also times the loader
with each of :data:`VARIANTS` (the loader's earlier or other options) against the same (b).

Every function takes a :class:`~tsm_apps.bench.data_path_setting.Setting`, so the same code
runs on the CPU at a tiny size (:func:`~tsm_apps.bench.data_path_setting.tiny_setting`, the
tests).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Optional

import torch
from torch.utils.data import default_collate

from ..distributed import DistEnv, pick_device
from ..train.config import load_config
from ..train.inputs import check_inputs
from ..train.loader import DECODE_THREADS, on_device
from ..train.run import clip_sets
from ..train.solver import set_train_mode
from ..train.trainer import Trainer
from .data_path_setting import Setting, write_videos
from .timing import Figure, load_average, synchronize

LOADED_BUDGET_S = 20.0  # a loaded warm-up, or timed block, stops after this many seconds
VARIANTS = {  # name: (data.normalize, loader options), each timed in the full run (detail)
    "normalize_worker": ("worker", {}),
    "no_pin_memory": ("auto", {"pin": False}),
    "prefetch_2": ("auto", {"prefetch": 2}),
    "decode_threads_auto": ("auto", {"decode_threads": 0}),
}


def bench_config(setting: Setting, root: Path, device: str, normalize: str = "auto"):
    """The training config of ``setting`` on the set at ``root`` (``tsm train --preset ...
    --data root --no-cache --workers N --batch-size B ...``)."""
    s = setting
    return load_config(
        None,
        s.preset,
        data=str(root),
        cache=False,
        workers=s.num_workers,
        normalize=normalize,
        batch_size=s.batch,
        size=s.size,
        device=device,
        work_dir=str(root / "run"),
        progress=False,
        tensorboard=False,
        **dict(s.model),
    )


def bench_trainer(setting: Setting, root: Path, device: str, normalize: str = "auto") -> Trainer:
    """``tsm train``'s trainer on the set at ``root`` (no hooks), built as ``train`` builds it."""
    cfg = bench_config(setting, root, device, normalize)
    check_inputs(cfg)
    env = DistEnv()
    dev = pick_device(cfg.device, env)
    train_set, val_set, num_classes, _ = clip_sets(cfg, False, dev)
    trainer = Trainer(cfg, env, dev, train_set, val_set, num_classes, hooks=[])
    set_train_mode(trainer.net, cfg.optim.bn)  # as each epoch starts
    return trainer


def _steps(trainer: Trainer, batches, n: int, budget_s: float = float("inf")) -> tuple:
    """``(seconds, seconds waiting for batches, steps)`` of ``n`` steps on ``batches`` (an
    iterator of ``(x, y)``), synchronised at both ends; fewer steps once ``budget_s`` seconds
    have passed (a slow loader's rate needs fewer)."""
    synchronize(trainer.device)
    t0, wait, done = time.perf_counter(), 0.0, 0
    while done < n and time.perf_counter() - t0 < budget_s:
        w = time.perf_counter()
        x, y = next(batches)
        wait += time.perf_counter() - w
        trainer.train_step(x, y)
        done += 1
    synchronize(trainer.device)
    return time.perf_counter() - t0, wait, done


def loaded_rate(trainer: Trainer, setting: Setting, **options) -> dict:
    """Clips/s of the step fed by the trainer's epoch loader (``options``: the loader's
    ``pin`` / ``prefetch`` / ``decode_threads``) after ``warmup_steps`` loaded steps (each
    block cut at :data:`LOADED_BUDGET_S`), the fraction of the time spent waiting for
    batches, and the loader's options."""
    loader = trainer.epoch_loader(**options)
    batches = iter(loader)
    _steps(trainer, batches, setting.warmup_steps, LOADED_BUDGET_S)
    seconds, wait, done = _steps(trainer, batches, setting.timed_steps, LOADED_BUDGET_S)
    del batches  # the workers stop
    workers = loader.num_workers
    return {
        "clips_per_s": setting.batch * done / seconds,
        "loaded_steps": done,
        "wait_fraction": round(wait / seconds, 4),
        "workers": workers,
        "pin_memory": loader.pin_memory,
        "prefetch_factor": loader.prefetch_factor if workers else None,
        "decode_threads": options.get("decode_threads", DECODE_THREADS) if workers else 0,
        "persistent_workers": loader.persistent_workers,
    }


def tensor_rate(trainer: Trainer, setting: Setting, batch: tuple) -> float:
    """Clips/s of the step on ``batch`` already on the device (the same step: a uint8 batch
    is normalised in it)."""
    x, y = (t.to(trainer.device) for t in batch)
    once = iter(lambda: (x, y), None)
    _steps(trainer, once, setting.tensor_warmup)
    seconds, _, done = _steps(trainer, once, setting.timed_steps)
    return setting.batch * done / seconds


def read_batch(dataset, keys: list) -> tuple:
    """``(batch as the loader collates it, ms a clip)``: ``keys`` read in this process."""
    t0 = time.perf_counter()
    batch = default_collate([dataset[k] for k in keys])
    return batch, (time.perf_counter() - t0) * 1e3 / len(keys)


def one_answer(trainer: Trainer, setting: Setting, root: Path, keys: list) -> dict:
    """The clips ``keys`` normalised in the workers and on the trainer's device: the largest
    difference (0: bit for bit), and each form's ms a clip read in this process."""
    clips = {
        where: read_batch(
            clip_sets(bench_config(setting, root, "cpu", where), False, "cpu")[0], keys
        )
        for where in ("worker", "device")
    }
    seen = on_device(clips["device"][0][0], trainer.device, trainer.cfg.model.modality).cpu()
    return {
        "normalize_device_vs_worker_max_abs": float((seen - clips["worker"][0][0]).abs().max()),
        "clip_ms_in_process": {k: round(ms, 1) for k, (_, ms) in clips.items()},
    }


def variant_ratios(trainer: Trainer, setting: Setting, root: Path, tensors: float) -> dict:
    """Loaded / tensor clips/s with each of :data:`VARIANTS`' options instead."""
    out = {}
    for name, (normalize, options) in VARIANTS.items():
        tr = (
            trainer
            if normalize == "auto"
            else bench_trainer(setting, root, str(trainer.device), normalize)
        )
        out[f"ratio_{name}"] = round(
            loaded_rate(tr, setting, **options)["clips_per_s"] / tensors, 4
        )
    return out


def measure(setting: Setting, device: str, root: Path) -> Figure:
    """The figure of ``setting`` on ``device``, the videos written under ``root``."""
    t0 = time.perf_counter()
    write_videos(root, setting)
    made_s = time.perf_counter() - t0
    load = load_average()
    trainer = bench_trainer(setting, root, device)
    trainer.epoch_loader()  # the epoch's order and shapes, as fit() sets them
    keys = next(iter(trainer.batches))
    batch = read_batch(trainer.train_set, keys)[0]  # the first read also indexes the files
    detail = one_answer(trainer, setting, root, keys)
    before = tensor_rate(trainer, setting, batch)
    loaded = loaded_rate(trainer, setting)
    after = tensor_rate(trainer, setting, batch)
    tensors = (before + after) / 2
    s = setting
    detail.update(
        loaded_clips_per_s=loaded.pop("clips_per_s"),
        tensor_clips_per_s=tensors,
        tensor_clips_per_s_before_after=[round(before, 2), round(after, 2)],
        **loaded,
        normalize=trainer.cfg.data.normalize_on(trainer.device),
        clip_dtype=str(batch[0].dtype).replace("torch.", ""),
        cpus=os.cpu_count(),
        batch=s.batch,
        warmup_steps=s.warmup_steps,
        timed_steps=s.timed_steps,
        videos=s.train_videos,
        frames=f"{s.frames} x {s.width}x{s.height} @ {s.fps} fps",
        video_kbps=round(_kbps(root, s), 1),
        videos_written_s=round(made_s, 1),
        dev_shm_gib=_shm_gib(),
    )
    if s.variants:
        detail.update(variant_ratios(trainer, s, root, tensors))
    detail["load"] = [load, load_average()]
    r = detail["loaded_clips_per_s"] / tensors
    m = trainer.cfg.model
    return Figure(
        f"data path: loaded / on-device train-step clips/s ({m.arch} {m.shift}, "
        f"{m.segments}x{trainer.cfg.data.size}, bs{s.batch}, {loaded['workers']} "
        f"workers, mp4 {s.width}x{s.height})",
        r,
        "x",
        ">= 0.9",
        r >= 0.9,
        device,
        detail,
    )


def _shm_gib() -> Optional[float]:
    """Size of ``/dev/shm`` (the workers' batches pass through it), GiB; None without one."""
    try:
        return round(shutil.disk_usage("/dev/shm").total / 2**30, 2)
    except OSError:
        return None


def _kbps(root: Path, setting: Setting) -> float:
    files = sorted(root.glob("videos/*/*.mp4"))
    seconds = len(files) * setting.frames / setting.fps
    return sum(f.stat().st_size for f in files) * 8 / 1000 / seconds


def figures(quick: bool, device: str, setting: Optional[Setting] = None) -> list:
    """The data-path figure at ``setting`` (default: the ``kinetics`` preset, on CUDA only: a
    ResNet-50 training step on a CPU says nothing of a GPU's data path; ``quick``: two timed
    steps per worker, no variants)."""
    if setting is None and torch.device(device).type != "cuda":
        return []
    s = setting or Setting()
    if quick and setting is None:
        s = replace(s, steps=max(12, 2 * s.num_workers), variants=False)
    with tempfile.TemporaryDirectory(prefix="tsm-datapath-") as tmp:
        return [measure(s, device, Path(tmp))]
