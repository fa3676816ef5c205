"""The recognizer of a training run: built from the config, optionally fine-tuned, DDP-wrapped."""

from __future__ import annotations

import torch
from torch.nn.parallel import DistributedDataParallel

from ..checkpoint.opening import open_checkpoint
from ..distributed import CommCounter
from ..models.recognizer import Recognizer, build_recognizer
from ..models.trunk import zero_init_residual_
from .config import TrainConfig
from .solver import base_lr, build_optimizer, freeze_bn_parameters, optim_groups


def build_model(cfg: TrainConfig, num_classes: int, device: torch.device) -> tuple:
    """``(recognizer, fc_loaded)``: the recognizer of ``cfg`` on ``device``, seeded with
    ``cfg.seed`` (the same on every rank); ``fc_loaded``: its fc came from
    ``cfg.model.pretrained`` (same classes) rather than being new."""
    torch.manual_seed(cfg.seed)  # identical initial weights on every rank
    m = cfg.model
    model = build_recognizer(
        m.arch,
        num_classes,
        m.segments,
        m.shift_mode,
        m.fold_div,
        dropout=m.dropout,
        width=m.width,
        output_stride=m.output_stride,
        in_channels=m.in_channels,
    )
    if m.zero_init_residual:
        zero_init_residual_(model)
    fc_loaded = load_pretrained(model, m.pretrained) if m.pretrained else False
    freeze_bn_parameters(model, cfg.optim.bn)
    model.to(device)
    if device.type == "cuda" and cfg.optim.channels_last:
        model.to(memory_format=torch.channels_last)
    return model, fc_loaded


def model_and_optimizer(
    cfg: TrainConfig, num_classes: int, device: torch.device, world_size: int = 1
) -> tuple:
    """``(recognizer, optimizer)`` of ``cfg``: :func:`build_model`, then ``cfg.optim.optimizer``
    over the groups of ``cfg.optim.optim_policy`` (:mod:`~tsm_apps.train.policies`) at the
    run's LR on ``world_size`` processes (:func:`~tsm_apps.train.solver.schedule.base_lr`)."""
    model, fc_loaded = build_model(cfg, num_classes, device)
    o = cfg.optim
    groups = optim_groups(
        model,
        o.optim_policy,
        o.weight_decay,
        fc_lr_mult=o.fc_lr_mult if cfg.model.pretrained else 1.0,
        flow=cfg.model.modality == "flow",
        fc_new=not fc_loaded,
    )
    lr = base_lr(o.lr_per_8, o.batch_size, world_size, o.lr_scaling)
    return model, build_optimizer(groups, o.optimizer, lr, o.momentum, o.nesterov)


def wrap_ddp(
    model: Recognizer, device: torch.device, counter: CommCounter
) -> DistributedDataParallel:
    """``DistributedDataParallel`` whose gradient all-reduces ``counter`` counts.

    BN buffers stay per process (no broadcast each step); the trainer pools them
    (:func:`~tsm_apps.train.averaging.merge_bn_`) before every evaluation and checkpoint.
    """
    ids = [device.index] if device.type == "cuda" else None
    ddp = DistributedDataParallel(model, device_ids=ids, broadcast_buffers=False)
    ddp.register_comm_hook(None, counter.ddp_hook)
    return ddp


def load_pretrained(model: Recognizer, path: str) -> bool:
    """Fine-tuning start: ``path`` opened into ``model``
    (:func:`~tsm_apps.checkpoint.opening.open_checkpoint` with ``into``: any known layout, the fc
    fresh when the classes differ, RGB weights into a flow model by cross-modality
    initialisation); returns whether the fc was loaded."""
    return open_checkpoint(path, into=model).fc_loaded
