"""``tsm train``: train a TSM/TSN recognizer from flags or ``--config FILE`` (torchrun-aware).

Every ``TrainConfig`` field, in every section, is a flag with its help
(``optim.batch_size`` -> ``--batch-size``; booleans also take ``--no-<name>``; see
:mod:`tsm_apps.options`); flags override the config file, which overrides the preset and the
defaults.
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
from typing import Optional

from ..options import add_options, given_options
from .config import PRESETS, TrainConfig, load_config
from .inputs import check_pretrained


def build_parser() -> argparse.ArgumentParser:
    """``--config``, ``--preset``, ``--json``, then every :class:`TrainConfig` field, section by
    section (:mod:`tsm_apps.options`); a flag not given stays out of the namespace, so the
    preset and the config file below it keep their values."""
    p = argparse.ArgumentParser(
        prog="tsm train",
        description="Train a TSM/TSN recognizer (torchrun-aware).",
        argument_default=argparse.SUPPRESS,
    )
    p.add_argument(
        "--config",
        help="JSON/TOML/YAML file of TrainConfig fields (in sections, or "
        "flat as older config.json files)",
    )
    p.add_argument(
        "--preset",
        choices=sorted(PRESETS),
        help="named recipe applied before --config and flags: 'synthetic' (the demo set), "
        "'kinetics' (the 74%% dense Kinetics recipe), 'official' / 'official-flow' "
        "(the official TSM Kinetics scripts), 'aavg' (K-step averaging, "
        "Algorithm 1), 'multigrid' (SlowFast's stepwise multigrid); values and "
        "sources in docs/recipes.md",
    )
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    return add_options(p, TrainConfig, given_only=True)


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    """Defaults < ``--preset`` < ``--config`` < the flags given."""
    given = given_options(args)
    path, preset = given.pop("config", None), given.pop("preset", None)
    given.pop("json", None)
    return load_config(path, preset, **given)


def main(argv: Optional[list] = None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    cfg = config_from_args(args)
    if cfg.model.pretrained:  # before the models and data code are even imported
        check_pretrained(cfg.model.pretrained)
    from .run import train  # torch/data imports only once the flags are fine

    summary = train(cfg)
    if summary["rank"] == 0:
        if getattr(args, "json", False):
            print(json.dumps(summary), flush=True)
        else:
            top1 = summary["val_top1"]
            print(
                f"tsm train: {summary['epochs']} epochs, {summary['steps']} steps, val top-1 "
                f"{'n/a' if top1 is None else f'{top1:.2f}'}%, best {summary['best_top1']:.2f}%, "
                f"{summary['wall_s']:.1f} s -> {summary['work_dir']}",
                flush=True,
            )
    return 128 + summary["signal"] if summary["stopped"] and summary["signal"] else 0
