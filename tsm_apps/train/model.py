"""The recognizer of a training run: built from the config, optionally fine-tuned, DDP-wrapped."""
from __future__ import annotations

import torch
from torch.nn.parallel import DistributedDataParallel

from ..checkpoint.reading import load_weights, read_checkpoint
from ..models.recognizer import Recognizer, build_recognizer
from .config import TrainConfig
from .distributed import CommCounter
from .recipe import freeze_bn_parameters


def build_model(cfg: TrainConfig, num_classes: int, device: torch.device) -> Recognizer:
    """The recognizer of ``cfg`` on ``device``, seeded with ``cfg.seed`` (the same on every rank)."""
    torch.manual_seed(cfg.seed)  # identical initial weights on every rank
    model = build_recognizer(cfg.arch, num_classes, cfg.segments, cfg.shift_mode,
                             cfg.fold_div, dropout=cfg.dropout, width=cfg.width,
                             output_stride=cfg.output_stride)
    if cfg.pretrained:
        load_pretrained(model, cfg.pretrained)
    freeze_bn_parameters(model, cfg.bn)
    model.to(device)
    if device.type == "cuda" and cfg.channels_last:
        model.to(memory_format=torch.channels_last)
    return model


def wrap_ddp(model: Recognizer, device: torch.device,
             counter: CommCounter) -> DistributedDataParallel:
    """``DistributedDataParallel`` whose gradient all-reduces ``counter`` counts.

    BN buffers stay per process (no broadcast each step); the trainer pools them
    (:func:`~tsm_apps.train.averaging.merge_bn_`) before every evaluation and checkpoint.
    """
    ids = [device.index] if device.type == "cuda" else None
    ddp = DistributedDataParallel(model, device_ids=ids, broadcast_buffers=False)
    ddp.register_comm_hook(None, counter.ddp_hook)
    return ddp


def load_pretrained(model: Recognizer, path: str) -> None:
    """Fine-tuning start: any known checkpoint layout; the fc stays fresh if the classes differ."""
    fc = read_checkpoint(path).get("state_dict", {}).get("fc.weight")
    same = fc is not None and tuple(fc.shape) == tuple(model.fc.weight.shape)
    load_weights(model, path, ignore=() if same else ("fc.",), report=print)
