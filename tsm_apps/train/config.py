"""The training configuration: typed dataclasses in sections, loadable from JSON/TOML/YAML,
saved resolved.

Sections (:mod:`~tsm_apps.train.sections`, :mod:`~tsm_apps.train.optimisation`): ``model``,
``data``, ``optim``, ``test`` (the test protocol a checkpoint records), ``multigrid`` and
``averaging``; the run's own fields (work dir, device, seed, logging, checkpoints) sit at the
top. Every field is a ``tsm train`` flag named by the field (``optim.batch_size`` ->
``--batch-size``). Configs written before the sections existed (flat: ``{"arch": ...,
"batch_size": ...}``, e.g. in older checkpoints' meta) still read: :func:`sectioned` moves each
flat key into its section.

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
from typing import Any, Mapping

from ..data.protocol import TestProtocol
from ..io import atomic_write_text
from ..options import from_mapping, option
from .averaging import AveragingConfig
from .multigrid_config import MultigridConfig
from .presets import PRESETS
from .sections import DataConfig, ModelConfig, TestViews
from .solver import OptimConfig

SECTIONS = {
    "model": ModelConfig,
    "data": DataConfig,
    "optim": OptimConfig,
    "test": TestViews,
    "multigrid": MultigridConfig,
    "averaging": AveragingConfig,
}
RENAMED = {"data": "path"}  # flat name -> name in its section (test's: "test_" + name)


def _section(cls: type, title: str) -> Any:
    return field(default_factory=cls, **option(cls.__doc__.splitlines()[0], title=title))


@dataclass
class TrainConfig:
    """Everything a training run needs; ``config.json`` in the work dir is ``asdict`` of this."""

    model: ModelConfig = _section(ModelConfig, "model")
    data: DataConfig = _section(DataConfig, "data")
    optim: OptimConfig = _section(OptimConfig, "optimisation")
    test: TestViews = _section(TestViews, "test protocol (recorded in checkpoints)")
    multigrid: MultigridConfig = _section(MultigridConfig, "multigrid")
    averaging: AveragingConfig = _section(AveragingConfig, "K-step averaging")
    work_dir: str = field(
        default="runs/recognizers/tsm",
        **option("run folder: checkpoints, logs, config.json", aliases=("--out",)),
    )
    device: str = "auto"
    seed: int = 0
    eval_every: int = field(default=1, **option("validate every N epochs (and after the last)"))
    log_every: int = field(
        default=0, **option("also log the train loss every N steps (0: per epoch only)")
    )
    checkpoint_every: int = field(
        default=0, **option("also write last.pth every N steps (0: per epoch only)")
    )
    max_steps: int = field(default=0, **option("stop after this many steps (0: no limit)"))
    progress: bool = True
    tensorboard: bool = field(default=True, **option("TensorBoard event files in the run folder"))
    resume: bool = field(
        default=False,
        **option("continue from <work_dir>/last.pth when it exists (a fresh start otherwise)"),
    )

    def __post_init__(self) -> None:
        for name, cls in SECTIONS.items():
            if isinstance(getattr(self, name), Mapping):
                setattr(self, name, from_mapping(cls, getattr(self, name), name))
            elif not isinstance(getattr(self, name), cls):
                raise TypeError(
                    f"config: {name} must be a {cls.__name__} or a mapping, got "
                    f"{type(getattr(self, name)).__name__}"
                )

    def test_protocol(self) -> TestProtocol:
        """The test protocol a checkpoint of this run records (``meta['test_protocol']``):
        validation's resize and crop geometry with ``test.clips`` x ``test.crops`` views."""
        d, t = self.data, self.test
        crop = d.val_scale_size if t.full_res else d.size
        sampling = "dense" if d.sampling == "dense" else ("multi" if t.clips > 1 else "tsn")
        return TestProtocol(
            "tsm_apps",
            sampling,
            t.clips,
            d.val_scale_size,
            crop,
            t.crops,
            source="recorded by tsm train",
        )

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping) -> "TrainConfig":
        """A config from its ``asdict`` (or a flat, pre-section one: :func:`sectioned`)."""
        return from_mapping(cls, sectioned(d, "config"), "config")


def _flat_names() -> dict:
    """``{flat name: (section, field)}`` of every field of the four own sections."""
    back = {v: k for k, v in RENAMED.items()}
    return {
        back.get(f.name, f.name) if sec != "test" else "test_" + f.name: (sec, f.name)
        for sec in ("model", "data", "optim", "test")
        for f in fields(SECTIONS[sec])
    }


FLAT = _flat_names()


def sectioned(d: Any, where: str = "config") -> Any:
    """``d`` with every flat key (``"arch"``, ``"batch_size"``, ``"test_clips"``, a ``"data"``
    path string) moved into its section (``{"model": {"arch": ...}}``); sections and other
    keys are kept (merged key by key). Not a mapping: returned as is (for the caller's error)."""
    if not isinstance(d, Mapping):
        return d
    out: dict = {}
    for k, v in d.items():
        if k in FLAT and not (k == "data" and isinstance(v, Mapping)):
            sec, name = FLAT[k]
            out.setdefault(sec, {})[name] = v
        elif k in SECTIONS and isinstance(v, Mapping):
            out[k] = merge(out.get(k, {}), dict(v))
        else:
            out[k] = v
    return out


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


def load_config(
    path: str | os.PathLike | None = None, preset: str | None = None, **overrides: Any
) -> TrainConfig:
    """Defaults, then ``PRESETS[preset]``, then the file at ``path``, then ``overrides``; each
    layer in sections or flat (flag names: ``batch_size=16``), see :func:`sectioned`."""
    d = TrainConfig().to_dict()
    if preset:
        if preset not in PRESETS:
            raise ValueError(f"unknown preset {preset!r}; choose one of {sorted(PRESETS)}")
        d = merge(d, sectioned(PRESETS[preset]))
    if path:
        d = merge(d, sectioned(read_config_file(path), str(path)))
    d = merge(d, sectioned(overrides))
    return TrainConfig.from_dict(d)


def save_config(cfg: TrainConfig, path: str | os.PathLike) -> Path:
    """Write the resolved config as JSON atomically."""
    return atomic_write_text(path, json.dumps(cfg.to_dict(), indent=2, sort_keys=True) + "\n")
