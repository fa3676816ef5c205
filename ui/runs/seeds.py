"""The training seeds of a demo run and the spread of its TSM-vs-TSN comparisons over them.

``tsm demo --seeds N`` trains every model with N training seeds on one data set: the first
seed's runs sit at the top of the runs folder (:class:`RunLayout` of the root, the runs the app
opens), seed ``k``'s in :meth:`RunLayout.seed_run`; ``seeds.json`` lists them, and the seeds
the detectors of each trained with (``detection_seeds``, when they differ). Each comparison
is a figure of both models read from each seed's JSON files; it is reported as mean [min, max]
over the seeds (the spread over training seeds on one test set, not an interval), of each
model and of TSM minus TSN, beside the paired-bootstrap 95% interval of TSM minus TSN over the
test items (:mod:`.intervals`, kept in ``intervals.json``). A *claimed* effect (TSM ahead)
holds when that interval lies above zero.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean
from typing import Callable, Optional, Sequence

from dissect.comparison import both_correct, pointing_on
from tsm_apps.evaluation.bootstrap import BootstrapInterval
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
    count: Optional[Callable[[RunLayout], Optional[int]]] = None  # test items it rests on


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


def _dissect_clips(runs: RunLayout) -> Optional[dict]:
    """``{model: metrics.json's per-clip records}``, None unless both models have them."""
    out = {m: (read_json(_dis_json(runs, m), missing_ok=True) or {}).get("clips") for m in MODELS}
    return out if all(out.values()) else None


def _both_correct_pointing(runs: RunLayout, model: str) -> Optional[float]:
    clips = _dissect_clips(runs)
    return None if clips is None else pointing_on(clips[model], both_correct(*clips.values()))


def _both_correct_count(runs: RunLayout) -> Optional[int]:
    clips = _dissect_clips(runs)
    return None if clips is None else len(both_correct(*clips.values()))


BOTH_CORRECT = "pointing_both_correct"

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
    Comparison(
        BOTH_CORRECT,
        "dissection, pointing, strict, clips both classify correctly",
        "dissection",
        "score",
        3,
        False,
        _both_correct_pointing,
        _both_correct_count,
    ),
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
    counts: list = field(default_factory=list)  # test items per seed (``Comparison.count``)
    interval: Optional[BootstrapInterval] = None  # paired bootstrap of TSM - TSN
    unavailable: str = ""  # why there is no interval

    @property
    def diff(self) -> list:
        return [b - a for a, b in zip(self.tsn, self.tsm)]

    @property
    def holds(self) -> Optional[bool]:
        """A claimed effect: the paired-bootstrap interval of TSM - TSN lies above zero (None:
        not claimed, no seed, or no interval)."""
        if not self.comparison.claimed or not self.seeds or self.interval is None:
            return None
        return self.interval.low > 0

    @property
    def every_seed(self) -> bool:
        """TSM ahead at every seed (the min of the per-seed differences above zero)."""
        return bool(self.seeds) and all(d > 0 for d in self.diff)

    @property
    def title(self) -> str:
        """The comparison's title, with the test items per seed when it counts them."""
        n = ", ".join(str(c) for c in self.counts)
        return f"{self.comparison.title} (n={n})" if self.counts else self.comparison.title

    def interval_text(self) -> str:
        """``low to high`` of the paired-bootstrap interval (``+`` signs), or why there is none."""
        if self.interval is None:
            return f"({self.unavailable})" if self.unavailable else ""
        d = self.comparison.digits
        return f"{signed(self.interval.low, d)} to {signed(self.interval.high, d)}"

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
    """A :class:`Spread` per comparison with at least one seed holding both figures, each with
    its interval from ``intervals.json`` when that file was computed from the same figures."""
    layouts, det = seed_layouts(root), detection_seeds(root)
    saved = read_json(RunLayout(root).intervals, missing_ok=True)
    saved = None if saved is None else saved.get("comparisons", {})
    out = []
    for c in COMPARISONS:
        seeds, tsn, tsm, counts = [], [], [], []
        for seed, runs in layouts.items():
            a, b = (c.read(runs, m) for m in MODELS)
            if a is not None and b is not None:
                seeds.append(det.get(seed, seed) if c.group == "detection" else seed)
                tsn.append(a)
                tsm.append(b)
                if c.count is not None:
                    counts.append(c.count(runs))
        if seeds:
            out.append(_with_interval(Spread(c, seeds, tsn, tsm, counts), saved, c.key))
    return out


def _with_interval(spread: Spread, saved_all: Optional[dict], key: str) -> Spread:
    """``spread`` with its interval from ``intervals.json``'s comparisons ``saved_all`` (None:
    no such file), if it rests on the same per-seed figures."""
    saved = (saved_all or {}).get(key)
    if not saved:
        spread.unavailable = (
            "no intervals.json: written with the report"
            if saved_all is None
            else "not in intervals.json: write the report again"
        )
        return spread
    if saved.get("tsn") != spread.tsn or saved.get("tsm") != spread.tsm:
        spread.unavailable = "intervals.json is of other results: write the report again"
        return spread
    if saved.get("interval"):
        spread.interval = BootstrapInterval(**saved["interval"])
    else:
        spread.unavailable = saved.get("unavailable") or "no per-item results"
    return spread


def headline(spread: Spread) -> str:
    """One line: TSN, TSM and TSM - TSN as mean [min-max over seeds], the paired-bootstrap
    95% interval of TSM - TSN, and whether a claim holds (the interval above zero)."""
    verdict = {
        True: "; TSM ahead (interval above zero)",
        False: "; TSM NOT ahead (interval reaches zero)",
        None: "",
    }[spread.holds]
    ci = spread.interval_text()
    ci = f", 95% CI {ci}" if spread.interval is not None else (f" {ci}" if ci else "")
    return (
        f"{spread.title}: TSN {spread.text(spread.tsn)}, TSM "
        f"{spread.text(spread.tsm)}, TSM - TSN {spread.text(spread.diff, sign=True)}"
        f"{ci}{verdict}"
    )
