"""The training seeds of a demo run and the spread of its TSM-vs-TSN comparisons over them.

``tsm demo --seeds N`` trains every model with N training seeds on one data set: the first
seed's runs sit at the top of the runs folder (:class:`RunLayout` of the root, the runs the app
opens), seed ``k``'s in :meth:`RunLayout.seed_run`; ``seeds.json`` lists them, and the seeds
the detectors of each trained with (``detection_seeds``, when they differ). Each comparison
is a figure of both models read from each seed's JSON files; it is reported as mean [min, max]
over the seeds, of each model and of TSM minus TSN. A *claimed* effect (TSM ahead) holds when
its difference is above zero at every seed, i.e. its [min, max] interval excludes zero.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from statistics import fmean
from typing import Callable, Optional, Sequence

from tsm_apps.io import atomic_write_json, read_json

from .layout import MODELS, RunLayout

Reader = Callable[[RunLayout, str], Optional[float]]


def _json_value(path_of: Callable[[RunLayout, str], Path], *keys: str) -> Reader:
    def read(runs: RunLayout, model: str) -> Optional[float]:
        v = read_json(path_of(runs, model), missing_ok=True)
        for k in keys:
            v = v.get(k) if isinstance(v, dict) else None
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    return read


def _test_json(runs: RunLayout, m: str) -> Path:
    return runs.recognizer_test(m)


def _det_json(runs: RunLayout, m: str) -> Path:
    return runs.detection_metrics(m)


def _dis_json(runs: RunLayout, m: str) -> Path:
    return runs.dissection(m) / "metrics.json"


@dataclass(frozen=True)
class Comparison:
    """One figure compared between TSN and TSM: ``read(runs, model)`` gives it for one seed."""

    key: str
    title: str
    group: str  # recognition | detection | dissection
    unit: str
    digits: int
    claimed: bool  # the product claims TSM ahead here
    read: Reader


def _det(key: str, title: str, claimed: bool = False) -> Comparison:
    return Comparison(
        key,
        f"R-FCN mAP, {title}",
        "detection",
        "mAP points",
        1,
        claimed,
        _json_value(_det_json, key),
    )


def _dis(key: str, title: str, claimed: bool = False) -> Comparison:
    return Comparison(
        key,
        f"dissection, {title}",
        "dissection",
        "score",
        3,
        claimed,
        _json_value(_dis_json, "aggregate", "method", key),
    )


COMPARISONS = (
    Comparison(
        "top1",
        "recognition, held-out test top-1 (%)",
        "recognition",
        "top-1 points",
        1,
        True,
        _json_value(_test_json, "top1"),
    ),
    _det("mAP_corrupted", "corrupted frames", True),
    _det("mAP_corrupted_glare", "glare frames", True),
    _det("mAP_fast", "fast motion", True),
    _det("mAP", "all frames"),
    _det("mAP_slow", "slow motion"),
    _det("mAP_medium", "medium motion"),
    _det("mAP_corrupted_occlusion", "occluded frames"),
    _det("mAP_corrupted_blur", "blurred frames"),
    _det("mAP_clean", "clean frames"),
    _dis("pointing", "pointing game, strict (held-out test clips)", True),
    _dis("pointing_tol", "pointing game, standard tolerance (held-out test clips)"),
    _dis("temporal_auc", "temporal AUC, acting vs still frames (held-out test clips)"),
)
"""Every comparison, the claimed effects first in each group."""


def write_seeds(
    root: Path, data_seed: int, training_seeds: Sequence[int], detection_offset: int = 0
) -> None:
    """``seeds.json``: the data seed and the training seeds (the first one at the root); with
    ``detection_offset``, ``detection_seeds``: each training seed plus it (the detectors')."""
    info = {"data_seed": data_seed, "training_seeds": list(training_seeds)}
    if detection_offset:
        info["detection_seeds"] = [s + detection_offset for s in training_seeds]
    atomic_write_json(RunLayout(root).seeds_file, info)


def detection_seeds(root: Path) -> dict:
    """``{training seed: the seed its detectors trained with}`` from ``seeds.json`` (the same
    seed when it lists no ``detection_seeds``)."""
    info = read_json(RunLayout(root).seeds_file, missing_ok=True) or {}
    train = [int(s) for s in info.get("training_seeds") or []]
    det = [int(s) for s in info.get("detection_seeds") or train]
    return dict(zip(train, det))


def seed_layouts(root: Path) -> dict:
    """``{training seed: RunLayout}`` from ``seeds.json``; a run folder without it (a single
    seed) gives ``{None: RunLayout(root)}``."""
    runs = RunLayout(root)
    info = read_json(runs.seeds_file, missing_ok=True) or {}
    seeds = [int(s) for s in info.get("training_seeds") or []]
    if not seeds:
        return {None: runs}
    return {s: runs if i == 0 else runs.seed_run(s) for i, s in enumerate(seeds)}


def interval(values: Sequence[float]) -> tuple:
    """``(mean, min, max)``; ``(None, None, None)`` for no values."""
    if not values:
        return None, None, None
    return fmean(values), min(values), max(values)


@dataclass
class Spread:
    """One comparison over the seeds that have both models' figure."""

    comparison: Comparison
    seeds: list
    tsn: list
    tsm: list

    @property
    def diff(self) -> list:
        return [b - a for a, b in zip(self.tsn, self.tsm)]

    @property
    def holds(self) -> Optional[bool]:
        """A claimed effect: TSM ahead at every seed (None: not claimed, or no seed)."""
        if not self.comparison.claimed or not self.seeds:
            return None
        return all(d > 0 for d in self.diff)

    def text(self, values: Sequence[float], sign: bool = False) -> str:
        """``mean [min, max]`` at the comparison's digits (``+`` signs with ``sign``)."""
        mean, lo, hi = interval(values)
        if mean is None:
            return ""
        mean, lo, hi = (signed(v, self.comparison.digits, sign) for v in (mean, lo, hi))
        return f"{mean} [{lo}, {hi}]"


def signed(value: float, digits: int, sign: bool = True) -> str:
    """``value`` at ``digits`` decimals, ``+`` before positives with ``sign``; a value that
    rounds to zero is ``0.0`` (``+0.0``), never ``-0.0``."""
    return f"{round(value, digits) + 0.0:{'+' if sign else ''}.{digits}f}"


def spreads(root: Path) -> list:
    """A :class:`Spread` per comparison with at least one seed holding both figures."""
    layouts, det = seed_layouts(root), detection_seeds(root)
    out = []
    for c in COMPARISONS:
        seeds, tsn, tsm = [], [], []
        for seed, runs in layouts.items():
            a, b = (c.read(runs, m) for m in MODELS)
            if a is not None and b is not None:
                seeds.append(det.get(seed, seed) if c.group == "detection" else seed)
                tsn.append(a)
                tsm.append(b)
        if seeds:
            out.append(Spread(c, seeds, tsn, tsm))
    return out


def headline(spread: Spread) -> str:
    """One line: TSN, TSM and TSM - TSN as mean [min, max], and whether a claim holds."""
    verdict = {True: "; TSM ahead at every seed", False: "; TSM NOT ahead at every seed", None: ""}[
        spread.holds
    ]
    return (
        f"{spread.comparison.title}: TSN {spread.text(spread.tsn)}, TSM "
        f"{spread.text(spread.tsm)}, TSM - TSN {spread.text(spread.diff, sign=True)}"
        f"{verdict}"
    )
