"""The end of a dissection run: dataset-level thresholds, ``metrics.json`` and ``units.json``.

Everything here is recomputed from the files of the run folder, so it is the same after a
resumed run as after an uninterrupted one, and the same with any number of processes: each
process reads its shard of the finished clips, thresholds and unit levels are computed exactly
over all of them (histograms and order statistics exchanged between processes), and process 0
merges the records in clip-id order and writes the files.
"""

from __future__ import annotations

import logging
import zlib
from typing import Dict, List, Optional

import numpy as np
import torch

from tsm_apps.data.protocol import TestProtocol
from tsm_apps.progress import progress_bar

from .capture import capture
from .clips import ClipEntry, load_clip
from .distributed import DistEnv, all_gather_objects, all_reduce_sum, shard
from .faithfulness import summarise_faithfulness
from .layout import DissectionLayout
from .metrics import (
    box_masks,
    centre_prior,
    has_box,
    mask_box_iou,
    mean_defined,
    pointing_hits,
    random_map,
    standard_tolerance,
    summarise,
)
from .storage import load_npz, read_json, write_json
from .threshold import DEFAULT_KEEP, DEFAULT_MAX_FRACTION, keep_fraction_thresholds
from .units import ND_MIN_IOU, UnitCollector, default_unit_layers
from .units_sharded import dissect_layer_sharded

log = logging.getLogger("dissect")
KINDS = ("method", "flow", "centre", "random", "sanity")


def baseline_seed(cid: str, seed: int) -> int:
    """Seed of a clip's random-map baseline (stable across resumed runs)."""
    return zlib.crc32(cid.encode()) ^ seed


def _kind_maps(arrays: Dict[str, np.ndarray], cid: str, seed: int) -> Dict[str, np.ndarray]:
    maps = arrays["maps"]
    out = {
        "method": maps,
        "centre": centre_prior(maps.shape),
        "random": random_map(maps.shape, baseline_seed(cid, seed)),
    }
    if "flow_maps" in arrays:
        out["flow"] = arrays["flow_maps"]
    if "sanity_maps" in arrays:
        out["sanity"] = arrays["sanity_maps"].astype(np.float32)
    return out


def _shard_maps(lay: DissectionLayout, ids: List[str], seed: int):
    """A re-iterable pass over this process's clips: ``{kind: map}`` per clip."""

    def passes():
        for cid in ids:
            yield _kind_maps(load_npz(lay.maps(cid)), cid, seed)

    return passes


def add_dataset_scores(lay: DissectionLayout, records: List[dict], seed: int) -> Dict[str, float]:
    """Compute each kind's dataset threshold (20% of pixels kept, over the clips of every
    process: :func:`keep_fraction_thresholds`) and add ``iou_dataset`` and ``pointing_tol``
    (the pointing game with its standard tolerance) to this process's ``records``."""
    ids = [r["id"] for r in records]
    thresholds = keep_fraction_thresholds(
        _shard_maps(lay, ids, seed), KINDS, DEFAULT_KEEP, all_reduce_sum
    )
    for r in records:
        arrays = load_npz(lay.maps(r["id"]))
        boxes = arrays["boxes"]
        for kind, m in _kind_maps(arrays, r["id"], seed).items():
            if kind not in r["scores"]:  # a record from before its kind was scored
                continue
            iou = mask_box_iou(m >= thresholds[kind], boxes)
            r["scores"][kind]["iou_dataset"] = [None if np.isnan(v) else float(v) for v in iou]
            hits = pointing_hits(m, boxes, standard_tolerance(m.shape[1:]))
            r["scores"][kind]["pointing_tol"] = [
                bool(h) if p else None for h, p in zip(hits, has_box(boxes))
            ]
    return thresholds


def _counts(lay: DissectionLayout, records: List[dict], result) -> dict:
    failed = {
        p.stem: read_json(p).get("error", "")
        for p in lay.failed_files()
        if not lay.record(p.stem).is_file()
    }
    out = {"done": len(records), "failed": len(failed)}
    if result is not None:
        now = all_reduce_sum(np.array([result.done, result.skipped, len(result.failed)]))
        out.update(
            listed=result.total,
            processed_now=int(now[0]),
            skipped_existing=int(now[1]),
            failed_now=int(now[2]),
        )
    return {"counts": out, "failed": failed}


def _accuracy(records: List[dict], stream: Optional[str] = None) -> Optional[float]:
    """Top-1 over the labelled clips, of the RGB model or of ``record[stream]`` ("flow")."""
    preds = [r[stream]["pred"] if stream else r["pred"] for r in records]
    return mean_defined(
        [None if r.get("label") is None else float(p == r["label"]) for r, p in zip(records, preds)]
    )


def _aggregate(scores: List[dict]) -> dict:
    """One kind's aggregate: :func:`summarise`, and the mean deletion/insertion AUCs and curves
    where the clips carry them (``--faithfulness``)."""
    return {**summarise(scores), **summarise_faithfulness([s.get("faithfulness") for s in scores])}


def summarise_run(
    lay: DissectionLayout, threshold: str, seed: int, result=None, env: Optional[DistEnv] = None
) -> Optional[dict]:
    """Write ``metrics.json`` from the run folder (every process takes part; process 0 merges
    and writes); returns it on process 0, None elsewhere."""
    env = env or DistEnv()
    ids = lay.done_ids()
    mine = [read_json(lay.record(cid)) for cid in shard(ids, env)]
    thresholds = add_dataset_scores(lay, mine, seed) if ids else {}
    counts = _counts(lay, [None] * len(ids), result)
    gathered = {r["id"]: r for part in all_gather_objects(mine) for r in part}
    if not env.is_main:
        return None
    records = [gathered[cid] for cid in ids]
    kinds = [k for k in KINDS if records and all(k in r["scores"] for r in records)]
    metrics = {
        "settings": read_json(lay.settings).get("settings", {}),
        "threshold": {
            "primary": threshold,
            "keep": DEFAULT_KEEP,
            "max_fraction": DEFAULT_MAX_FRACTION,
            "dataset_values": thresholds,
        },
        "primary_iou": "iou_dataset" if threshold == "dataset" else "iou_max20",
        "accuracy": _accuracy(records),
        "top5_accuracy": mean_defined([r.get("top5_hit") for r in records]),
        "flow_accuracy": _accuracy(records, "flow") if "flow" in kinds else None,
        "aggregate": {k: _aggregate([r["scores"][k] for r in records]) for k in kinds},
        "sanity_rank_corr": mean_defined([r.get("sanity_rank_corr") for r in records]),
        **counts,
        "clips": {r["id"]: r for r in records},
    }
    write_json(lay.metrics, metrics)
    write_json(lay.index, _index(lay, ids, metrics["failed"]))
    return metrics


def _index(lay: DissectionLayout, ids: List[str], failed: dict) -> dict:
    index = {cid: {"status": "done", "path": read_json(lay.record(cid))["path"]} for cid in ids}
    index.update({cid: {"status": "failed", "error": err} for cid, err in failed.items()})
    return dict(sorted(index.items()))


def dissect_run_units(
    lay: DissectionLayout,
    model: torch.nn.Module,
    entries: List[ClipEntry],
    protocol: TestProtocol,
    max_clips: int,
    quantile: float,
    device: torch.device,
    progress: bool = True,
    env: Optional[DistEnv] = None,
) -> Optional[dict]:
    """Unit dissection over the first ``max_clips`` finished clips that have boxes, split
    between processes (:func:`dissect_layer_sharded`: the single-process result); process 0
    writes ``units.json`` (kept as is when it already covers the same clips and quantile)."""
    env = env or DistEnv()
    chosen = [e for e in entries if e.boxes is not None and lay.record(e.id).is_file()]
    chosen = chosen[:max_clips]
    ids = [e.id for e in chosen]
    if not chosen:
        log.info("unit dissection: no finished clip with boxes")
        return None
    old = read_json(lay.units) if lay.units.is_file() else {}
    if old.get("clips") == ids and old.get("quantile") == quantile:
        return old
    layers = default_unit_layers(model)
    collector = UnitCollector(layers)
    for e in progress_bar(shard(chosen, env), desc="units", unit="clip", enabled=progress):
        clip = load_clip(e, model.num_segments, protocol)
        with capture(model, layers) as cap, torch.no_grad():
            model(clip.input[None].to(device))
        collector.add(cap.activations, box_masks(clip.boxes, clip.input.shape[-2:]))
    result = {}
    for name in layers:
        acts = np.concatenate(collector.acts[name]) if len(collector) else None
        masks = np.concatenate(collector.masks[name]) if len(collector) else None
        result[name] = dissect_layer_sharded(
            acts, masks, all_gather_objects, all_reduce_sum, quantile, ND_MIN_IOU
        )
    out = {"clips": ids, "quantile": quantile, "min_iou": ND_MIN_IOU, "layers": result}
    if env.is_main:
        write_json(lay.units, out)
    return out
