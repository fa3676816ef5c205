"""TSM vs TSN: two dissection runs side by side, ``compare.html`` (the report of
:mod:`dissect.report` over both runs) and ``compare.json`` (each run's aggregates, sanity check
and detector-unit counts, its random map's deletion/insertion AUCs, and the model-free baselines).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

from .layout import Run, load_run
from .report import run_name, write_report
from .storage import write_json


def write_compare_report(run_a, run_b, out, names: Optional[Sequence[str]] = None) -> Path:
    """Side-by-side report of two runs (e.g. TSM vs TSN) in ``out/compare.html``."""
    runs = [load_run(run_a), load_run(run_b)]
    names = list(names) if names else [run_name(r) for r in runs]
    if names[0] == names[1]:
        names = [f"A: {names[0]}", f"B: {names[1]}"]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "compare.json", compare_table(runs, names))
    return write_report(runs, names, out / "compare.html", f"{names[0]} vs {names[1]}")


def compare_table(runs: Sequence[Run], names: Sequence[str]) -> dict:
    """Aggregates of each run, its sanity check and detector-unit counts, plus the baselines;
    the deletion/insertion AUCs of a random map are per run (they read that run's model)."""
    out = {"runs": {}, "baselines": runs[0].metrics.get("aggregate", {})}
    out["baselines"] = {k: v for k, v in out["baselines"].items() if k in ("centre", "random")}
    for run, name in zip(runs, names):
        agg = run.metrics.get("aggregate", {})
        layers = run.units.get("layers", {})
        out["runs"][name] = {
            "root": str(run.root),
            "maps": agg.get("method"),
            "sanity": agg.get("sanity"),
            "flow": agg.get("flow"),
            "flow_accuracy": run.metrics.get("flow_accuracy"),
            "accuracy": run.metrics.get("accuracy"),
            "random_map_faithfulness": _faithfulness(agg.get("random", {})),
            "detector_units": {k: v["detectors"] for k, v in layers.items()},
        }
    return out


def _faithfulness(agg: dict) -> Optional[dict]:
    """The ``*_auc`` entries of an aggregate (None when the run has no ``--faithfulness``)."""
    out = {k: v for k, v in agg.items() if k.endswith("_auc") and k != "temporal_auc"}
    return out or None
