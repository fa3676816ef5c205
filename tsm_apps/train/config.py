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
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Optional

from ..io import atomic_write_text
from ..models.modality import MODALITIES
from .presets import PRESETS

SHIFTS = ("offline", "online", "none")
BN_MODES = ("train", "partial", "frozen")
OPTIMIZERS = ("sgd", "adam")
AVERAGING = ("none", "kavg")
ADAPTIVE_RULES = ("factor", "margin")
CROPS = ("area", "multiscale")


@dataclass
class MultigridConfig:
    """Multigrid schedule as SlowFast runs it (Wu et al. 2020, ``slowfast/utils/multigrid.py``).

    ``long_factors``: ``(temporal, spatial)`` factors of the long cycle, coarsest first
    (SlowFast ``LONG_CYCLE_FACTORS``). ``short_factors``: spatial factors of the BASE crop for
    the short cycle (``SHORT_CYCLE_FACTORS``). ``steps``/``max_epoch``: the LR stages of the
    reference schedule (``SOLVER.STEPS``/``MAX_EPOCH`` of SlowFast's stepwise Kinetics configs);
    one long cycle runs per stage, the phase after ``steps[-1]`` trains the base shape, and the
    table is rescaled to the run's ``epochs``. ``bn_base_size``: clips per BN group
    (``BN_BASE_SIZE``; 0 = the base per-process batch), kept by sub-batch BN.
    ``min_steps``: fewest steps an epoch keeps; a batch is capped at ``clips // min_steps`` (a
    small data set otherwise gets a handful of huge-LR steps per coarse epoch).
    """
    enabled: bool = False
    long_cycle: bool = True
    short_cycle: bool = True
    long_factors: list = field(default_factory=lambda: [[0.25, 0.5 ** 0.5], [0.5, 0.5 ** 0.5],
                                                        [0.5, 1.0], [1.0, 1.0]])
    short_factors: list = field(default_factory=lambda: [0.5, 0.5 ** 0.5])
    steps: list = field(default_factory=lambda: [0, 94, 154, 196])
    max_epoch: float = 239
    bn_base_size: int = 0
    scale_lr: bool = True
    min_steps: int = 4

    def __post_init__(self) -> None:
        if self.min_steps < 1:
            raise ValueError(f"multigrid min_steps must be >= 1, got {self.min_steps}")
        if self.bn_base_size < 0:
            raise ValueError(f"multigrid bn_base_size must be >= 0, got {self.bn_base_size}")
        st = [float(v) for v in self.steps]
        if len(st) < 2 or st[0] != 0 or any(b <= a for a, b in zip(st, st[1:])) \
                or self.max_epoch < st[-1]:
            raise ValueError(f"multigrid steps must rise from 0 with at least 2 entries and "
                             f"end at or before max_epoch {self.max_epoch}, got {self.steps!r}")
        check_factor_pairs(self.long_factors)


def check_factor_pairs(pairs: Any) -> list:
    """``pairs`` as ``[[temporal, spatial], ...]`` floats, each factor in ``(0, 1]``."""
    try:
        out = [[float(v) for v in pair] for pair in pairs]
    except (TypeError, ValueError):
        out = []
    if not out or any(len(pair) != 2 or not all(0 < v <= 1 for v in pair) for pair in out):
        raise ValueError(f"multigrid long_factors: expected [temporal, spatial] pairs with "
                         f"factors in (0, 1], e.g. [[0.5, 0.7071], [1, 1]], got {pairs!r}")
    return out


@dataclass
class AveragingConfig:
    """K-step model averaging (AAVG, Algorithm 2): ``k`` local steps, then one averaging round.

    ``k = -1`` averages once per epoch. The per-process batch grows by ``b2`` (up to
    ``batch_cap`` clips per process) when the val top-1 ``a`` stalls against the best ``a*``:
    ``adaptive_rule="factor"`` (Algorithm 1, line 15): ``a < a* x b1``; ``"margin"`` (the
    paper's prose): ``a < a* + b1`` points.
    """
    method: str = "none"
    k: int = 8
    b1: float = 1.0
    b2: int = 2
    batch_cap: int = 0  # 0: 4x the starting per-process batch
    adaptive_rule: str = "factor"

    def __post_init__(self) -> None:
        if self.adaptive_rule not in ADAPTIVE_RULES:
            raise ValueError(f"adaptive_rule must be one of {ADAPTIVE_RULES}, "
                             f"got {self.adaptive_rule!r}")
        if self.method not in AVERAGING:
            raise ValueError(f"averaging must be one of {AVERAGING}, got {self.method!r}")
        if self.k == 0 or self.k < -1:
            raise ValueError(f"k must be >= 1 or -1 (once per epoch), got {self.k}")
        if self.b2 < 1:
            raise ValueError(f"b2 (batch growth factor) must be >= 1, got {self.b2}")


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
    crop: str = "area"  # "multiscale": TSN's GroupMultiScaleCrop (scales 1, .875, .75, .66)
    flip: bool = False  # off by default: flipping changes the meaning of left/right motion
    cache: bool = True  # decode every video once and keep the uint8 frames in memory
    workers: int = 0
    # optimisation
    epochs: int = 50
    batch_size: int = 64
    accum_steps: int = 1  # each process splits its share into this many micro-batches
    lr_per_8: float = 0.00125
    warmup_epochs: float = 0.0
    warmup_start: float = 0.1  # warm-up starts at this fraction of the LR
    min_lr_ratio: float = 0.0
    optimizer: str = "sgd"
    momentum: float = 0.9
    weight_decay: float = 1e-4
    fc_lr_mult: float = 5.0
    bn: str = "train"
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
            self.multigrid = _from_dict(MultigridConfig, self.multigrid, "multigrid")
        if isinstance(self.averaging, dict):
            self.averaging = _from_dict(AveragingConfig, self.averaging, "averaging")
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
                  (self.crop in CROPS, f"crop must be one of {CROPS}, got {self.crop!r}")]
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
        return _from_dict(cls, d, "config")


def _from_dict(cls: type, d: dict, where: str) -> Any:
    if not isinstance(d, dict):
        raise TypeError(f"{where}: expected a mapping, got {type(d).__name__}")
    names = {f.name for f in fields(cls)}
    unknown = sorted(set(d) - names)
    if unknown:
        raise ValueError(f"{where}: unknown keys {unknown}; expected some of {sorted(names)}")
    return cls(**d)


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
