"""Finished ``tsm dissect run`` folders of the TSN and TSM recognizers: clips, maps, metrics."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np

from tsm_apps.io import read_json

from ...models import BASELINES
from .base import MODELS, Progress
from .checkpoints import model_of_checkpoint
from .flow import FlowMaps

__all__ = [
    "AttentionClip",
    "Dissection",
    "find_dissection",
    "dissection_stamp",
    "load_dissection",
    "dissection_clips",
    "clip_attention",
    "BASELINES",
    "dissection_summary",
    "attention_overlay",
]


@dataclass
class AttentionClip:
    """One clip of the TSN and TSM dissection runs, ready to show.

    ``frames (T, H, W, 3)`` uint8 (the pixels the maps explain); ``maps[model]`` raw float
    ``(T, H, W)``; ``mass[model]`` ``(T,)`` per-frame attention mass; ``gt_boxes`` ``(T, 4)`` or
    ``None`` (rows of NaN where the actor is absent); ``metrics[model]`` the clip's scores;
    ``flow[model]`` the flow stream's maps when that run was given a flow checkpoint.
    """

    frames: np.ndarray
    maps: dict[str, np.ndarray]
    mass: dict[str, np.ndarray]
    gt_boxes: Optional[np.ndarray] = None
    label: str = ""
    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)
    flow: dict[str, FlowMaps] = field(default_factory=dict)


@dataclass
class Dissection:
    """The dissection runs of the two models (``dissect.layout.Run`` each), by model name."""

    runs: dict[str, Any]

    @property
    def folders(self) -> dict[str, Path]:
        return {m: Path(r.root) for m, r in self.runs.items()}


def _model_of_run(folder: Path) -> Optional[str]:
    """``'TSN'`` or ``'TSM'`` from the config of the run's checkpoint (no temporal shift: TSN);
    None when the checkpoint cannot be read."""
    checkpoint = read_json(folder / "run.json").get("settings", {}).get("checkpoint")
    return model_of_checkpoint(Path(checkpoint)) if isinstance(checkpoint, str) else None


def find_dissection(runs: Path) -> Optional[dict[str, Path]]:
    """The newest dissection run folder (holding ``run.json``) of each model under ``runs``;
    ``None`` when there is none."""
    from .runs_folder import find_files

    found: dict[str, Path] = {}
    for settings in find_files(Path(runs), "run.json"):
        model = _model_of_run(settings.parent)
        if model and model not in found:
            found[model] = settings.parent
    return {m: found[m] for m in MODELS if m in found} or None  # always TSN, TSM order


def dissection_stamp(folders: dict[str, Path]) -> float:
    """Changes whenever a run gains a clip or a new ``metrics.json`` (for cache keys)."""
    paths = [f / sub for f in folders.values() for sub in ("clips", "metrics.json")]
    return max((p.stat().st_mtime for p in paths if p.exists()), default=0.0)


def load_dissection(folders: dict[str, Path]) -> Dissection:
    from dissect.layout import load_run

    return Dissection({m: load_run(f) for m, f in folders.items()})


def dissection_clips(d: Dissection) -> list[str]:
    """Ids of the clips every model's run has finished."""
    ids = [set(r.clips) for r in d.runs.values()]
    return sorted(set.intersection(*ids)) if ids else []


def _clip_scores(record: dict) -> dict[str, Any]:
    from dissect.metrics import mean_defined as mean

    sc = record["scores"]["method"]
    out = {"correct": float(record["pred"] == record["label"]), "pointing": mean(sc["pointing"])}
    for k in sorted(k for k in sc if k.startswith("iou_")):
        out[k] = mean(sc[k])
    out.update(temporal_auc=sc.get("temporal_auc"), mass_ratio=sc.get("mass_ratio"))
    return out


def _clip_frames(run: Any, record: dict, num_frames: int) -> tuple[np.ndarray, str]:
    """The displayed frames of a clip, re-decoded exactly as the dissection job sampled them."""
    from dissect.clips import load_clip, load_entries
    from tsm_apps.data.protocol import TestProtocol

    if "protocol" not in run.settings:
        raise ValueError(
            f"{run.root}: run.json records no test protocol (a run of an older "
            "version: run tsm dissect run again to see its frames)"
        )
    protocol = TestProtocol.from_dict(run.settings["protocol"])
    entries = load_entries(run.settings["settings"]["data"], clips=protocol.clips)
    entry = next((e for e in entries if e.id == record["id"]), None)
    if entry is None:
        raise ValueError(f"clip {record['id']} is no longer in {run.settings['settings']['data']}")
    clip = load_clip(entry, num_frames, protocol)
    return clip.frames, _class_name(run, record["label"])


def _class_name(run: Any, label: int) -> str:
    from dissect.clips import resolve_data

    ann = resolve_data(run.settings["settings"]["data"])[1]
    classes = read_json(ann).get("classes", []) if ann else []
    return str(classes[label]) if 0 <= label < len(classes) else str(label)


def clip_attention(d: Dissection, clip: str, progress: Optional[Progress] = None) -> AttentionClip:
    """Maps, per-frame mass, GT box and scores of ``clip`` in every model's run."""
    maps, mass, metrics, flow, boxes = {}, {}, {}, {}, None
    for i, (model, run) in enumerate(d.runs.items()):
        files = run.clips[clip]
        arrays = files.load_maps()
        maps[model] = arrays["maps"]
        mass[model] = np.asarray(files.record["scores"]["method"]["mass"], dtype=np.float64)
        metrics[model] = _clip_scores(files.record)
        if "flow_maps" in arrays:  # tsm dissect run --flow-checkpoint
            flow[model] = FlowMaps(
                arrays["flow_maps"],
                arrays["flow_indices"],
                files.record["flow"]["class_name"],
                run.settings["settings"].get("method", "cam"),
            )
        if boxes is None and not np.isnan(arrays["boxes"]).all():
            boxes = arrays["boxes"]
        if progress:
            progress((i + 1) / (len(d.runs) + 1))
    first = next(iter(d.runs.values()))
    frames, label = _clip_frames(first, first.clips[clip].record, len(maps[next(iter(maps))]))
    if progress:
        progress(1.0)
    return AttentionClip(frames, maps, mass, boxes, label, metrics, flow)


def dissection_summary(d: Dissection) -> dict[str, dict[str, Any]]:
    """``{row: {metric: value}}`` from each run's ``metrics.json``: one row per model (its maps'
    aggregates and top-1 accuracy) and, for a run made with a flow stream, one for its flow
    maps, then the baselines (centre prior, random map)."""
    out: dict[str, dict[str, Any]] = {}
    for model, run in d.runs.items():
        aggs = run.metrics.get("aggregate", {})
        out[model] = {"accuracy": run.metrics.get("accuracy"), **aggs.get("method", {})}
        if "flow" in aggs:
            out[f"{model}: flow stream"] = {
                "accuracy": run.metrics.get("flow_accuracy"),
                **aggs["flow"],
            }
    first = next(iter(d.runs.values()), None)
    for kind, label in BASELINES.items():
        agg = first.metrics.get("aggregate", {}).get(kind) if first else None
        if agg:
            out[label] = dict(agg)
    return out


def attention_overlay(
    clip: AttentionClip, model: str, per: str = "clip", flow: bool = False
) -> np.ndarray:
    """``(T, H, W, 3)`` uint8: ``model``'s maps (``flow``: its run's flow-stream maps) over the
    clip's frames (GT box drawn when known), colour scale per clip or per frame
    (:func:`dissect.overlay.overlay`)."""
    from dissect.overlay import overlay

    maps = clip.flow[model].maps if flow else clip.maps[model]
    return overlay(clip.frames, maps, per=per, boxes=clip.gt_boxes)
