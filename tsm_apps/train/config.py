"""The training configuration: typed dataclasses, loadable from JSON/TOML/YAML, saved resolved.

Precedence: dataclass defaults < config file < command-line flags. The resolved config is
written as ``<work_dir>/config.json`` beside the checkpoints; it loads back with
:func:`load_config` unchanged.

``batch_size`` is the *global* batch (all processes together, as in SlowFast); each of the
``W`` processes takes ``batch_size // W`` clips. The learning rate is ``lr_per_8`` per 8 clips
of the global batch (the TSM recipe: 0.00125 per 8 clips), see :mod:`tsm_apps.train.recipe`.
``accum_steps`` splits each process's share into micro-batches (gradients accumulated): BN
statistics are then computed per micro-batch, so one process with ``accum_steps = W`` trains
exactly as ``W`` processes do (same clips, same BN groups, same dropout masks).

Presets (:data:`PRESETS`, ``tsm train --preset NAME``) are named sets of fields between the
defaults and the config file: defaults < preset < config file < command-line flags.
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Optional

from ..data.protocol import TestProtocol
from ..io import atomic_write_text
from ..models.modality import MODALITIES
from ..options import from_mapping
from .averaging import ADAPTIVE_RULES, AVERAGING, AveragingConfig  # noqa: F401  (re-exported)
from .multigrid import MultigridConfig, check_factor_pairs  # noqa: F401  (re-exported)
from .policies import OPTIM_POLICIES  # noqa: F401  (re-exported)
from .presets import PRESETS
from .recipe import LR_POLICIES, LR_SCALINGS, WARMUP_RULES  # noqa: F401  (re-exported)

SHIFTS = ("offline", "online", "none")
BN_MODES = ("train", "partial", "frozen")
OPTIMIZERS = ("sgd", "adam")
CROPS = ("area", "multiscale")
SAMPLINGS = ("tsn", "dense")


@dataclass
class TrainConfig:
    """Everything a training run needs; ``config.json`` in the work dir is ``asdict`` of this."""
    data: str = ""
    train_list: str = ""  # default: <data>/train.txt
    val_list: str = ""  # default: <data>/val.txt
    work_dir: str = "runs/recognizers/tsm"
    # model
    arch: str = "resnet50"
    width: float = 1.0
    output_stride: int = 32  # 16 or 8: dilated last stages (ResNets), finer CAMs
    segments: int = 8
    shift: str = "offline"
    fold_div: int = 8
    dropout: float = 0.5
    num_classes: int = 0  # 0: from the data's labels
    pretrained: str = ""  # checkpoint to fine-tune from (fc re-initialised, fc LR x fc_lr_mult)
    modality: str = "rgb"  # "flow": new_length stacked x/y flow frames per segment
    new_length: int = 5  # flow frames per segment (2 * new_length input channels)
    # data
    size: int = 224
    min_area: float = 0.5  # random crop covers [min_area, 1] of the frame area ("area" crop)
    crop: str = "area"  # "multiscale": TSN's GroupMultiScaleCrop (scales: crop_scales)
    crop_scales: list = field(default_factory=lambda: [1.0, 0.875, 0.75, 0.66])
    flip: bool = False  # off by default: flipping changes the meaning of left/right motion
    scale_size: int = 0  # shorter side before validation's centre crop (0: size * 256 // 224,
    # the official ratio; -1: size itself, so a square frame is seen whole)
    sampling: str = "tsn"  # "dense": I3D dense sampling (64-frame window) in training and test
    test_clips: int = 1  # the test protocol recorded in checkpoints: clips per video
    test_crops: int = 1  # ... views per clip (1 centre, 3 along the long side, 10)
    test_full_res: bool = False  # ... crops of scale_size instead of size (official --full_res)
    cache: bool = True  # decode every video once and keep the uint8 frames in memory
    workers: int = 0
    # optimisation
    epochs: int = 50
    batch_size: int = 64
    accum_steps: int = 1  # each process splits its share into this many micro-batches
    lr_per_8: float = 0.00125
    lr_scaling: str = "global"  # per 8 clips of the global batch; "process": of one process's
    # batch, the same LR on any number of learners (AAVG Algorithm 1)
    lr_policy: str = "cosine"  # "step": x0.1 at each of lr_steps; "constant" (after warm-up)
    lr_steps: list = field(default_factory=list)  # epochs of the x0.1 steps (lr_policy "step")
    warmup_epochs: float = 0.0
    warmup_start: float = 0.1  # warm-up starts at this fraction of the LR ...
    warmup_rule: str = "fraction"  # ... or "worker": at one worker's LR (Goyal et al. §2.2)
    min_lr_ratio: float = 0.0
    optimizer: str = "sgd"
    momentum: float = 0.9
    nesterov: bool = False  # SGD with Nesterov momentum
    weight_decay: float = 1e-4
    optim_policy: str = "tsm_apps"  # "tsm_official": the official TSM get_optim_policies
    fc_lr_mult: float = 5.0  # tsm_apps policy: the fc's LR multiplier when fine-tuning
    bn: str = "train"
    precise_bn_batches: int = 0  # recompute BN statistics over this many training batches
    # after each epoch (precise BN, SlowFast's NUM_BATCHES_PRECISE); 0: off
    clip_grad: float = 20.0  # max gradient norm; 0 disables
    amp: bool = True  # CUDA only
    channels_last: bool = True  # CUDA only
    device: str = "auto"
    seed: int = 0
    # evaluation, logging, checkpoints
    eval_every: int = 1
    log_every: int = 0  # also log train loss every N steps (0: per epoch only)
    checkpoint_every: int = 0  # also write last.pth every N steps (0: per epoch only)
    max_steps: int = 0  # stop after this many steps in total (0: no limit)
    progress: bool = True
    tensorboard: bool = True
    resume: bool = False
    multigrid: MultigridConfig = field(default_factory=MultigridConfig)
    averaging: AveragingConfig = field(default_factory=AveragingConfig)

    def __post_init__(self) -> None:
        if isinstance(self.multigrid, dict):
            self.multigrid = from_mapping(MultigridConfig, self.multigrid, "multigrid")
        if isinstance(self.averaging, dict):
            self.averaging = from_mapping(AveragingConfig, self.averaging, "averaging")
        checks = [(self.shift in SHIFTS, f"shift must be one of {SHIFTS}, got {self.shift!r}"),
                  (self.bn in BN_MODES, f"bn must be one of {BN_MODES}, got {self.bn!r}"),
                  (self.optimizer in OPTIMIZERS,
                   f"optimizer must be one of {OPTIMIZERS}, got {self.optimizer!r}"),
                  (self.epochs >= 1, f"epochs must be >= 1, got {self.epochs}"),
                  (self.batch_size >= 1, f"batch_size must be >= 1, got {self.batch_size}"),
                  (self.accum_steps >= 1, f"accum_steps must be >= 1, got {self.accum_steps}"),
                  (self.segments >= 1, f"segments must be >= 1, got {self.segments}"),
                  (self.output_stride in (32, 16, 8),
                   f"output_stride must be 32, 16 or 8, got {self.output_stride}"),
                  (self.size >= 16, f"size must be >= 16 pixels, got {self.size}"),
                  (0 < self.min_area <= 1, f"min_area must be in (0, 1], got {self.min_area}"),
                  (self.lr_per_8 > 0, f"lr_per_8 must be > 0, got {self.lr_per_8}"),
                  (self.modality in MODALITIES,
                   f"modality must be one of {MODALITIES}, got {self.modality!r}"),
                  (self.new_length >= 1, f"new_length must be >= 1, got {self.new_length}"),
                  (self.crop in CROPS, f"crop must be one of {CROPS}, got {self.crop!r}"),
                  (self.sampling in SAMPLINGS,
                   f"sampling must be one of {SAMPLINGS}, got {self.sampling!r}"),
                  (self.scale_size in (0, -1) or self.scale_size >= self.size,
                   f"scale_size must be 0, -1 or >= size {self.size}, got {self.scale_size}"),
                  (self.test_clips >= 1, f"test_clips must be >= 1, got {self.test_clips}"),
                  (self.test_crops in (1, 3, 10),
                   f"test_crops must be 1, 3 or 10, got {self.test_crops}"),
                  (self.lr_policy in LR_POLICIES,
                   f"lr_policy must be one of {LR_POLICIES}, got {self.lr_policy!r}"),
                  (self.lr_scaling in LR_SCALINGS,
                   f"lr_scaling must be one of {LR_SCALINGS}, got {self.lr_scaling!r}"),
                  (self.warmup_rule in WARMUP_RULES,
                   f"warmup_rule must be one of {WARMUP_RULES}, got {self.warmup_rule!r}"),
                  (self.precise_bn_batches >= 0,
                   f"precise_bn_batches must be >= 0, got {self.precise_bn_batches}"),
                  (self.optim_policy in OPTIM_POLICIES,
                   f"optim_policy must be one of {OPTIM_POLICIES}, got {self.optim_policy!r}"),
                  (_rising(self.lr_steps),
                   f"lr_steps must be rising epochs > 0, got {self.lr_steps!r}"),
                  (bool(self.crop_scales) and all(_number(v) and 0 < v <= 1
                                                  for v in self.crop_scales),
                   f"crop_scales must be fractions in (0, 1], got {self.crop_scales!r}")]
        for ok, msg in checks:
            if not ok:
                raise ValueError(msg)

    @property
    def shift_mode(self) -> Optional[str]:
        """The ``shift`` argument of :func:`tsm_apps.build_recognizer` (``None`` for TSN)."""
        return None if self.shift == "none" else self.shift

    @property
    def in_channels(self) -> int:
        """Input channels per segment: 3 (RGB) or ``2 * new_length`` (stacked flow x/y)."""
        return 3 if self.modality == "rgb" else 2 * self.new_length

    @property
    def val_scale_size(self) -> int:
        """Shorter side before validation's centre crop."""
        if self.scale_size == -1:
            return self.size
        return self.scale_size or self.size * 256 // 224

    def test_protocol(self) -> TestProtocol:
        """The test protocol a checkpoint of this run records (``meta['test_protocol']``):
        validation's resize and crop geometry with ``test_clips`` x ``test_crops`` views."""
        crop = self.val_scale_size if self.test_full_res else self.size
        sampling = "dense" if self.sampling == "dense" else (
            "multi" if self.test_clips > 1 else "tsn")
        return TestProtocol("tsm_apps", sampling, self.test_clips, self.val_scale_size, crop,
                            self.test_crops, source="recorded by tsm train")

    def lists(self) -> tuple[Path, Path]:
        """``(train list, val list)``; ``data`` may be a folder or the train list itself."""
        data = Path(self.data)
        if not self.data:
            raise ValueError("no data given: pass --data DIR (holding train.txt/val.txt) or a list")
        train = Path(self.train_list) if self.train_list else (
            data / "train.txt" if data.is_dir() else data)
        val = Path(self.val_list) if self.val_list else (
            data / "val.txt" if data.is_dir() else data.with_name("val.txt"))
        for p in (train, val):
            if not p.is_file():
                raise FileNotFoundError(f"list file not found: {p} (from --data {self.data})")
        return train, val

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "TrainConfig":
        return from_mapping(cls, d, "config")


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _rising(values: Any) -> bool:
    return isinstance(values, list) and all(_number(v) and v > 0 for v in values) and \
        all(b > a for a, b in zip(values, values[1:]))


def read_config_file(path: str | os.PathLike) -> dict:
    """Parse a ``.json``, ``.toml`` or ``.yaml``/``.yml`` file into a (nested) dict."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"config file not found: {path}")
    text = path.read_text()
    suffix = path.suffix.lower()
    try:
        if suffix == ".json":
            d = json.loads(text)
        elif suffix == ".toml":
            import tomllib
            d = tomllib.loads(text)
        elif suffix in (".yaml", ".yml"):
            try:
                import yaml
            except ImportError as e:
                raise ValueError(f"{path}: YAML needs PyYAML; use .json or .toml") from e
            d = yaml.safe_load(text) or {}
        else:
            raise ValueError(f"{path}: unknown config format {suffix!r}; use .json/.toml/.yaml")
    except (json.JSONDecodeError, ValueError) as e:
        raise ValueError(f"cannot parse config file {path}: {e}") from e
    if not isinstance(d, dict):
        raise ValueError(f"{path}: top level must be a mapping, got {type(d).__name__}")
    return d


def merge(base: dict, override: dict) -> dict:
    """Recursive dict update (sections such as ``multigrid`` merge key by key)."""
    out = dict(base)
    for k, v in override.items():
        out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def load_config(path: str | os.PathLike | None = None, preset: str | None = None,
                **overrides: Any) -> TrainConfig:
    """Defaults, then ``PRESETS[preset]``, then the file at ``path``, then ``overrides``."""
    d = TrainConfig().to_dict()
    if preset:
        if preset not in PRESETS:
            raise ValueError(f"unknown preset {preset!r}; choose one of {sorted(PRESETS)}")
        d = merge(d, PRESETS[preset])
    if path:
        d = merge(d, read_config_file(path))
    d = merge(d, overrides)
    return TrainConfig.from_dict(d)


def save_config(cfg: TrainConfig, path: str | os.PathLike) -> Path:
    """Write the resolved config as JSON atomically."""
    return atomic_write_text(path, json.dumps(cfg.to_dict(), indent=2, sort_keys=True) + "\n")
