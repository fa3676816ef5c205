"""The ``multigrid`` section of the training config (``tsm train --multigrid``, ``--mg-*``):
:class:`MultigridConfig`, SlowFast's multigrid options (``slowfast/config/defaults.py``
``MULTIGRID``, ``SOLVER.STEPS``/``GAMMA``) checked on construction, and the parser of its
``(temporal, spatial)`` factor pairs. The schedule they drive, and what each option does to it:
:mod:`tsm_apps.train.multigrid`.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any

from ..options import numbers, option

MG_LR_POLICIES = ("step", "cosine")


def check_factor_pairs(pairs: Any) -> list:
    """``pairs`` as ``[[temporal, spatial], ...]`` floats, each factor in ``(0, 1]``."""
    try:
        out = [[float(v) for v in pair] for pair in pairs]
    except (TypeError, ValueError):
        out = []
    if not out or any(len(pair) != 2 or not all(0 < v <= 1 for v in pair) for pair in out):
        raise ValueError(
            f"multigrid long_factors: expected [temporal, spatial] pairs with "
            f"factors in (0, 1], e.g. [[0.5, 0.7071], [1, 1]], got {pairs!r}"
        )
    return out


def factor_pairs(text: str) -> list:
    """``"0.5,0.7071;1,1"`` -> ``[[0.5, 0.7071], [1.0, 1.0]]`` (``temporal,spatial`` pairs, the
    ``--mg-long-factors`` value), checked by :func:`check_factor_pairs`."""
    try:
        return check_factor_pairs([part.split(",") for part in text.split(";")])
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected 'T,S;T,S;...' with factors in (0, 1], e.g. '0.5,0.7071;1,1', got {text!r}"
        ) from None


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
    small data set otherwise gets a handful of huge-LR steps per coarse epoch; 1: no cap, as
    SlowFast). ``epoch_factor`` (``EPOCH_FACTOR``), ``lr_policy`` and ``gamma``
    (``SOLVER.GAMMA``): see :mod:`tsm_apps.train.multigrid`.
    """

    enabled: bool = field(
        default=False, **option("multigrid long + short cycles", flag="multigrid")
    )
    long_cycle: bool = field(
        default=True, **option("the long cycle (T, S) shapes", flag="mg-long-cycle")
    )
    short_cycle: bool = field(
        default=True,
        **option(
            "the short cycle (smaller crops inside each long-cycle shape)",
            flag="mg-short-cycle",
            hidden_negations=("--mg-no-short-cycle",),
        ),
    )
    long_factors: list = field(
        default_factory=lambda: [[0.25, 0.5**0.5], [0.5, 0.5**0.5], [0.5, 1.0], [1.0, 1.0]],
        **option(
            "long-cycle (temporal, spatial) factors, coarsest first, as T,S;T,S;...",
            flag="mg-long-factors",
            type=factor_pairs,
            metavar="T,S;T,S;...",
        ),
    )
    short_factors: list = field(
        default_factory=lambda: [0.5, 0.5**0.5],
        **option(
            "short-cycle spatial factors of the base crop, comma-separated",
            flag="mg-short-factors",
            type=numbers,
            metavar="F,F",
        ),
    )
    steps: list = field(
        default_factory=lambda: [0, 94, 154, 196],
        **option(
            "LR stages of the reference schedule, one long cycle each (SlowFast SOLVER.STEPS)",
            flag="mg-steps",
            type=numbers,
            metavar="E,E,...",
        ),
    )
    max_epoch: float = field(
        default=239,
        **option(
            "reference schedule length; after the last step: the base shape", flag="mg-max-epoch"
        ),
    )
    bn_base_size: int = field(
        default=0,
        **option(
            "clips per BN group, sub-batch BN (0: the base batch per process)",
            flag="mg-bn-base-size",
        ),
    )
    scale_lr: bool = field(
        default=True,
        **option(
            "scale the LR with the long-cycle batch",
            flag="mg-scale-lr",
            hidden_negations=("--mg-no-scale-lr",),
        ),
    )
    min_steps: int = field(
        default=4,
        **option("fewest steps per epoch: caps the batch at clips // N", flag="mg-min-steps"),
    )
    epoch_factor: float = field(
        default=1.5,
        **option(
            "the run trains --epochs x this many epochs (SlowFast EPOCH_FACTOR)",
            flag="mg-epoch-factor",
        ),
    )
    lr_policy: str = field(
        default="step",
        **option(
            "step: SlowFast's x gamma per stage x the long-cycle batch; cosine: the run's cosine x "
            "the batch multiplier",
            flag="mg-lr-policy",
            choices=MG_LR_POLICIES,
        ),
    )
    gamma: float = field(
        default=0.1,
        **option("the step policy's factor per stage (SlowFast SOLVER.GAMMA)", flag="mg-gamma"),
    )

    def __post_init__(self) -> None:
        if self.lr_policy not in MG_LR_POLICIES:
            raise ValueError(
                f"multigrid lr_policy must be one of {MG_LR_POLICIES}, got {self.lr_policy!r}"
            )
        if not self.epoch_factor > 0:
            raise ValueError(f"multigrid epoch_factor must be > 0, got {self.epoch_factor}")
        if self.min_steps < 1:
            raise ValueError(f"multigrid min_steps must be >= 1, got {self.min_steps}")
        if self.bn_base_size < 0:
            raise ValueError(f"multigrid bn_base_size must be >= 0, got {self.bn_base_size}")
        st = [float(v) for v in self.steps]
        if (
            len(st) < 2
            or st[0] != 0
            or any(b <= a for a, b in zip(st, st[1:]))
            or self.max_epoch < st[-1]
        ):
            raise ValueError(
                f"multigrid steps must rise from 0 with at least 2 entries and "
                f"end at or before max_epoch {self.max_epoch}, got {self.steps!r}"
            )
        check_factor_pairs(self.long_factors)
