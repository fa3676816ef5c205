"""The report's dissection table: where and when TSN and TSM look, one row per metric of
``dissect/{tsn,tsm}/metrics.json`` beside the model-free baselines (centre prior, random map)
and each model's randomised-weights sanity check, then accuracy and the detector units per layer
(``units.json``); its figure has one panel per metric.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from tsm_apps.io import read_json

from ...runs.layout import MODELS, RunLayout
from .charts import Panel, panels_figure
from .tables import Table, class_count

DISSECT_METRICS = (
    "pointing",
    "pointing_active",
    "pointing_tol",
    "temporal_auc",
    "mass_ratio",
    "iou_dataset",
    "iou_max20",
    "deletion_pixels_auc",
    "insertion_pixels_auc",
    "deletion_frames_auc",
    "insertion_frames_auc",
)


def dissection_table(root: Path) -> Table:
    """One row per metric: TSN, TSM, and the baselines beside them (the centre prior and the
    random map are model-free; the randomised-weights sanity check is per model)."""
    title = "Dissection (where and when the networks look)"
    layout = RunLayout(root)
    runs = {m: read_json(layout.dissection(m) / "metrics.json", missing_ok=True) for m in MODELS}
    missing = [
        layout.rel(layout.dissection(m) / "metrics.json") for m, v in runs.items() if v is None
    ]
    if missing:
        return Table(title, [], [], f"missing: {', '.join(missing)}")
    agg = {m: v.get("aggregate", {}) for m, v in runs.items()}
    rows = [
        [
            k,
            agg["tsn"].get("method", {}).get(k),
            agg["tsm"].get("method", {}).get(k),
            agg["tsm"].get("centre", {}).get(k),
            agg["tsm"].get("random", {}).get(k),
            agg["tsn"].get("sanity", {}).get(k),
            agg["tsm"].get("sanity", {}).get(k),
        ]
        for k in DISSECT_METRICS
    ]
    rows.append(
        [
            "accuracy",
            runs["tsn"].get("accuracy"),
            runs["tsm"].get("accuracy"),
            None,
            None,
            None,
            None,
        ]
    )
    units = {
        m: read_json(layout.dissection(m) / "units.json", missing_ok=True) or {} for m in MODELS
    }
    for layer in units["tsm"].get("layers") or {}:
        rows.append(
            [
                f"detector units {layer}",
                units["tsn"].get("layers", {}).get(layer, {}).get("detectors"),
                units["tsm"]["layers"][layer].get("detectors"),
                None,
                None,
                None,
                None,
            ]
        )
    clips = agg["tsm"].get("method", {}).get("clips")
    data = (
        (read_json(layout.dissection("tsm") / "run.json", missing_ok=True) or {})
        .get("settings", {})
        .get("data")
    )
    source = Path(data).name if data else "the data set"
    return Table(
        title,
        ["metric", "TSN", "TSM", "centre prior", "random map", "TSN randomised", "TSM randomised"],
        rows,
        figure=_dissection_figure(rows, class_count(root)),
        note=f"{clips} clips of {source}, CAM of the predicted class; pointing: the map's maximum "
        "lies on the actor's box (frames with a box; _active: frames where it acts; _tol: "
        "within the game's standard tolerance, 15 px at 224 = 7.5 px at 112); "
        "temporal_auc / mass_ratio: map mass in acting vs still frames; IoU of the "
        "thresholded map with the box; deletion/insertion AUCs (runs with --faithfulness): "
        "the class probability as the most-attributed pixels of each frame / whole frames "
        "are replaced by the clip's mean (deletion, lower = more faithful) or put back "
        "(insertion, higher); the random map's, read by TSM. Side-by-side report: dissect/compare/compare.html",
    )


def _dissection_figure(rows: list, classes: Optional[int]) -> Any:
    """One panel per dissection metric: TSN and TSM bars; the centre prior, the random map and
    (accuracy) chance as reference lines."""
    panels = []
    for r in rows:
        name = str(r[0])
        if name == "accuracy":
            refs = {"chance": 1.0 / classes if classes else None}
            unit = "fraction of clips"
        elif name.startswith("detector units"):
            refs, unit = {}, "units"
        else:
            refs = {"centre prior": r[3], "random map": r[4]}
            unit = "ratio" if name == "mass_ratio" else "score"
        panels.append(Panel(name, unit, {"TSN": r[1], "TSM": r[2]}, refs))
    return panels_figure("Dissection metrics (one panel per metric)", panels)
