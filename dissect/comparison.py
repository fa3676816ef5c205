"""TSM vs TSN: two dissection runs side by side, ``compare.html`` (the report of
:mod:`dissect.report` over both runs) and ``compare.json`` (each run's aggregates, sanity check
and detector-unit counts, its random map's deletion/insertion AUCs, and the model-free baselines;
``both_correct``: the strict pointing game of each run over the clips that both runs classify
correctly, so that neither model's map is read on a clip it gets wrong).
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Optional, Sequence

from .layout import Run, load_run
from .metrics import mean_defined
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
    clips = [run.metrics.get("clips") or {} for run in runs]
    ids = both_correct(*clips)
    out["both_correct"] = {
        "clips": len(ids),
        "pointing": {n: pointing_on(c, ids) for n, c in zip(names, clips)},
    }
    return out


def both_correct(clips_a: Mapping[str, dict], clips_b: Mapping[str, dict]) -> list:
    """Ids (in ``clips_a``'s order) of the labelled clips whose ``pred`` equals the label in
    both runs' per-clip records (``metrics.json``'s ``clips``)."""

    def correct(rec: Optional[dict]) -> bool:
        return rec is not None and rec.get("label") is not None and rec.get("pred") == rec["label"]

    return [cid for cid, rec in clips_a.items() if correct(rec) and correct(clips_b.get(cid))]


def pointing_on(
    clips: Mapping[str, dict], ids: Sequence[str], key: str = "pointing"
) -> Optional[float]:
    """The pointing game (``key``: ``pointing`` strict, ``pointing_tol``) of the maps pooled
    over the frames with a box of the clips ``ids``, as :func:`dissect.metrics.summarise`
    pools it over all clips; None without such a frame."""
    return mean_defined([h for cid in ids for h in clips[cid]["scores"]["method"].get(key, [])])


def _faithfulness(agg: dict) -> Optional[dict]:
    """The ``*_auc`` entries of an aggregate (None when the run has no ``--faithfulness``)."""
    out = {k: v for k, v in agg.items() if k.endswith("_auc") and k != "temporal_auc"}
    return out or None
