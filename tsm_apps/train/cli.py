"""``tsm train``: train a TSM/TSN recognizer from flags or ``--config FILE`` (torchrun-aware).

Every top-level ``TrainConfig`` field is a flag (``batch_size`` -> ``--batch-size``; booleans
also take ``--no-<name>``); flags override the config file, which overrides the defaults.
Multi-process runs go through torchrun (or ``srun``), e.g.::

    torchrun --standalone --nproc-per-node 2 -m tsm_apps.cli train --data data/temporal ...
    torchrun --nnodes 2 --rdzv-backend c10d --rdzv-endpoint HOST:29400 --max-restarts 3 \\
        -m tsm_apps.cli train --resume ...

``--resume`` continues from ``<work_dir>/last.pth`` when it exists (a fresh start otherwise),
so an elastic restart picks up where the killed workers stopped.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import fields
from typing import Optional

from .config import (
    ADAPTIVE_RULES,
    AVERAGING,
    BN_MODES,
    CROPS,
    LR_POLICIES,
    LR_SCALINGS,
    MODALITIES,
    OPTIM_POLICIES,
    OPTIMIZERS,
    PRESETS,
    SAMPLINGS,
    SHIFTS,
    WARMUP_RULES,
    MultigridConfig,
    TrainConfig,
    check_factor_pairs,
    load_config,
)
from .inputs import check_pretrained
from .multigrid import MG_LR_POLICIES

CHOICES = {"shift": SHIFTS, "bn": BN_MODES, "optimizer": OPTIMIZERS, "modality": MODALITIES,
           "crop": CROPS, "sampling": SAMPLINGS, "lr_policy": LR_POLICIES,
           "optim_policy": OPTIM_POLICIES, "lr_scaling": LR_SCALINGS, "warmup_rule": WARMUP_RULES}
NESTED = {  # flag -> (section, key)
    "multigrid": ("multigrid", "enabled"),
    "averaging": ("averaging", "method"),
    "k": ("averaging", "k"),
    "b1": ("averaging", "b1"),
    "b2": ("averaging", "b2"),
    "batch_cap": ("averaging", "batch_cap"),
    "adaptive_rule": ("averaging", "adaptive_rule"),
    "mg_steps": ("multigrid", "steps"),
    "mg_max_epoch": ("multigrid", "max_epoch"),
    "mg_bn_base_size": ("multigrid", "bn_base_size"),
    "mg_no_short_cycle": ("multigrid", "short_cycle"),
    "mg_min_steps": ("multigrid", "min_steps"),
    "mg_no_scale_lr": ("multigrid", "scale_lr"),
    "mg_long_factors": ("multigrid", "long_factors"),
    "mg_epoch_factor": ("multigrid", "epoch_factor"),
    "mg_lr_policy": ("multigrid", "lr_policy"),
}


def factor_pairs(text: str) -> list:
    """``"0.5,0.7071;1,1"`` -> ``[[0.5, 0.7071], [1.0, 1.0]]`` (``temporal,spatial`` pairs),
    checked by :func:`~tsm_apps.train.config.check_factor_pairs`."""
    try:
        return check_factor_pairs([part.split(",") for part in text.split(";")])
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected 'T,S;T,S;...' with factors in (0, 1], e.g. '0.5,0.7071;1,1', got {text!r}"
        ) from None


def _floats(text: str) -> list:
    try:
        return [float(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tsm train", description="Train a TSM/TSN recognizer (torchrun-aware).",
                                argument_default=argparse.SUPPRESS)
    p.add_argument("--config", help="JSON/TOML/YAML file of TrainConfig fields")
    p.add_argument("--preset", choices=sorted(PRESETS),
                   help="named recipe applied before --config and flags: 'synthetic' (the demo set), "
                        "'kinetics' (the 74%% dense Kinetics recipe), 'official' / 'official-flow' "
                        "(the official TSM Kinetics scripts), 'aavg' (K-step averaging, "
                        "Algorithm 1), 'multigrid' (SlowFast's stepwise multigrid); values and "
                        "sources in docs/recipes.md")
    defaults = TrainConfig()
    for f in fields(TrainConfig):
        if f.name in ("multigrid", "averaging"):
            continue
        flag, value = "--" + f.name.replace("_", "-"), getattr(defaults, f.name)
        if f.name == "work_dir":
            p.add_argument(flag, "--out", help=f"run folder: checkpoints, logs (default: {value})")
            continue
        if isinstance(value, bool):
            p.add_argument(flag, action=argparse.BooleanOptionalAction,
                           help=f"(default: {value})")
        elif isinstance(value, list):
            p.add_argument(flag, type=_floats, metavar="V,V,...",
                           help=f"comma-separated numbers (default: {value!r})")
        else:
            p.add_argument(flag, type=type(value), choices=CHOICES.get(f.name),
                           metavar=None if f.name in CHOICES else f.name.upper(),
                           help=f"(default: {value!r})")
    p.add_argument("--multigrid", action="store_true", help="multigrid long + short cycles")
    p.add_argument("--mg-steps", type=_floats, metavar="E,E,...",
                   help="LR stages of the reference schedule, one long cycle each (SlowFast "
                        "SOLVER.STEPS; default 0,94,154,196)")
    p.add_argument("--mg-max-epoch", type=float,
                   help="reference schedule length; after the last step: base shape (239)")
    p.add_argument("--mg-bn-base-size", type=int,
                   help="clips per BN group, sub-batch BN (0: the base batch per process)")
    p.add_argument("--mg-no-short-cycle", action="store_false", help="long cycle only")
    p.add_argument("--mg-min-steps", type=int,
                   help="fewest steps per epoch: caps the batch at clips // N (default 4)")
    p.add_argument("--mg-long-factors", type=factor_pairs, metavar="T,S;T,S;...",
                   help="long-cycle (temporal, spatial) factors, coarsest first (default "
                        + repr(";".join(f"{t:g},{s:.4g}" for t, s in
                                        MultigridConfig().long_factors)) + ")")
    p.add_argument("--mg-no-scale-lr", action="store_false",
                   help="keep the base LR instead of scaling it with the long-cycle batch")
    p.add_argument("--mg-epoch-factor", type=float,
                   help="the run trains --epochs x this many epochs (SlowFast EPOCH_FACTOR, 1.5)")
    p.add_argument("--mg-lr-policy", choices=MG_LR_POLICIES,
                   help="'step': SlowFast's x0.1 per stage x the long-cycle batch (default); "
                        "'cosine': the run's cosine x the batch multiplier")
    p.add_argument("--averaging", choices=AVERAGING, help="'kavg': K-step model averaging")
    p.add_argument("--k", type=int, help="local steps between averaging rounds (-1: per epoch)")
    p.add_argument("--b1", type=float, help="kavg: threshold on the best top-1 (factor, or points "
                                            "with --adaptive-rule margin)")
    p.add_argument("--b2", type=int, help="kavg: batch growth factor")
    p.add_argument("--batch-cap", type=int, help="kavg: largest batch per process")
    p.add_argument("--adaptive-rule", choices=ADAPTIVE_RULES,
                   help="kavg: grow the batch when top-1 < best*b1 ('factor', Algorithm 1, "
                        "default) or < best+b1 points ('margin', the paper's prose)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    return p


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    given = dict(vars(args))
    path = given.pop("config", None)
    preset = given.pop("preset", None)
    given.pop("json", None)
    overrides: dict = {}
    for name, value in given.items():
        if name in NESTED:
            section, key = NESTED[name]
            overrides.setdefault(section, {})[key] = value
        else:
            overrides[name] = value
    return load_config(path, preset, **overrides)


def main(argv: Optional[list] = None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    cfg = config_from_args(args)
    if cfg.pretrained:  # before the models and data code are even imported
        check_pretrained(cfg.pretrained)
    from .run import train  # torch/data imports only once the flags are fine
    summary = train(cfg)
    if summary["rank"] == 0:
        if getattr(args, "json", False):
            print(json.dumps(summary), flush=True)
        else:
            top1 = summary["val_top1"]
            print(f"tsm train: {summary['epochs']} epochs, {summary['steps']} steps, val top-1 "
                  f"{'n/a' if top1 is None else f'{top1:.2f}'}%, best {summary['best_top1']:.2f}%, "
                  f"{summary['wall_s']:.1f} s -> {summary['work_dir']}", flush=True)
    return 128 + summary["signal"] if summary["stopped"] and summary["signal"] else 0
