"""The end of a dissection run: dataset-level thresholds, ``metrics.json`` and ``units.json``.

Everything here is recomputed from the files of the run folder, so it is the same after a
resumed run as after an uninterrupted one.
"""
from __future__ import annotations

import logging
import zlib
from typing import Dict, List, Optional

import numpy as np
import torch
from tqdm import tqdm

from .capture import capture
from .clips import ClipEntry, load_clip
from .layout import RunLayout
from .metrics import (box_masks, centre_prior, has_box, mask_box_iou, mean_defined, pointing_hits,
                      random_map, standard_tolerance, summarise)
from .storage import load_npz, read_json, write_json
from .threshold import DEFAULT_KEEP, DEFAULT_MAX_FRACTION, dataset_keep_fraction_threshold
from .units import ND_MIN_IOU, UnitCollector, default_unit_layers

log = logging.getLogger("dissect")
KINDS = ("method", "centre", "random", "sanity")


def baseline_seed(cid: str, seed: int) -> int:
    """Seed of a clip's random-map baseline (stable across resumed runs)."""
    return zlib.crc32(cid.encode()) ^ seed


def _kind_maps(arrays: Dict[str, np.ndarray], cid: str, seed: int) -> Dict[str, np.ndarray]:
    maps = arrays["maps"]
    out = {"method": maps, "centre": centre_prior(maps.shape),
           "random": random_map(maps.shape, baseline_seed(cid, seed))}
    if "sanity_maps" in arrays:
        out["sanity"] = arrays["sanity_maps"].astype(np.float32)
    return out


def add_dataset_scores(lay: RunLayout, records: List[dict], seed: int) -> Dict[str, float]:
    """Compute each kind's dataset threshold (20% of pixels kept) and add ``iou_dataset`` and
    ``pointing_tol`` (the pointing game with its standard tolerance) to every record."""
    loaded = {r["id"]: load_npz(lay.maps(r["id"])) for r in records}
    maps = {r["id"]: _kind_maps(loaded[r["id"]], r["id"], seed) for r in records}
    thresholds = {}
    for kind in KINDS:
        have = [m[kind] for m in maps.values() if kind in m]
        if have:
            thresholds[kind] = dataset_keep_fraction_threshold(have, DEFAULT_KEEP)
    for r in records:
        boxes = loaded[r["id"]]["boxes"]
        for kind, m in maps[r["id"]].items():
            iou = mask_box_iou(m >= thresholds[kind], boxes)
            r["scores"][kind]["iou_dataset"] = [None if np.isnan(v) else float(v) for v in iou]
            hits = pointing_hits(m, boxes, standard_tolerance(m.shape[1:]))
            r["scores"][kind]["pointing_tol"] = [bool(h) if p else None
                                                 for h, p in zip(hits, has_box(boxes))]
    return thresholds


def _counts(lay: RunLayout, records: List[dict], result) -> dict:
    index = read_json(lay.index) if lay.index.is_file() else {}
    failed = {k: v["error"] for k, v in index.items() if v.get("status") == "failed"}
    out = {"done": len(records), "failed": len(failed)}
    if result is not None:
        out.update(listed=result.total, processed_now=result.done,
                   skipped_existing=result.skipped, failed_now=len(result.failed))
    return {"counts": out, "failed": failed}


def summarise_run(lay: RunLayout, threshold: str, seed: int, result=None) -> dict:
    """Write ``metrics.json`` from the run folder; returns it."""
    records = [read_json(lay.record(cid)) for cid in lay.done_ids()]
    thresholds = add_dataset_scores(lay, records, seed) if records else {}
    kinds = [k for k in KINDS if records and all(k in r["scores"] for r in records)]
    metrics = {
        "settings": read_json(lay.settings).get("settings", {}),
        "threshold": {"primary": threshold, "keep": DEFAULT_KEEP,
                      "max_fraction": DEFAULT_MAX_FRACTION, "dataset_values": thresholds},
        "primary_iou": "iou_dataset" if threshold == "dataset" else "iou_max20",
        "accuracy": mean_defined([float(r["pred"] == r["label"]) for r in records]),
        "aggregate": {k: summarise([r["scores"][k] for r in records]) for k in kinds},
        "sanity_rank_corr": mean_defined([r.get("sanity_rank_corr") for r in records]),
        **_counts(lay, records, result),
        "clips": {r["id"]: r for r in records},
    }
    write_json(lay.metrics, metrics)
    return metrics


def dissect_run_units(lay: RunLayout, model: torch.nn.Module, entries: List[ClipEntry],
                      size: Optional[int], max_clips: int, quantile: float,
                      device: torch.device, progress: bool = True) -> Optional[dict]:
    """Unit dissection over the first ``max_clips`` finished clips that have boxes; writes
    ``units.json`` (kept as is when it already covers the same clips with the same quantile)."""
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
    for e in tqdm(chosen, desc="units", unit="clip", disable=not progress):
        clip = load_clip(e, model.num_segments, size)
        with capture(model, layers) as cap, torch.no_grad():
            model(clip.input[None].to(device))
        collector.add(cap.activations, box_masks(clip.boxes, clip.input.shape[-2:]))
    out = {"clips": ids, "quantile": quantile, "min_iou": ND_MIN_IOU,
           "layers": collector.result(quantile, ND_MIN_IOU)}
    write_json(lay.units, out)
    return out
