"""Dissection batch job: maps, overlays and scores for every clip of a data set, resumably.

Each clip's outputs are written atomically and its record last (see :mod:`dissect.layout`), so a
killed job loses nothing already written and a re-run skips finished clips. A clip that cannot
be processed (unreadable video, label outside the model's classes, bad annotations) is a counted,
logged skip; the rest of the run completes. Settings that change the maps (checkpoint, data,
method, ...) must match a previous run in the same folder (:mod:`dissect.job_config`).

Under ``torchrun`` (or SLURM ``srun``) each process takes the whole clips ``[rank::world]`` of
the list, writes their files itself, and :mod:`dissect.summary` computes the data-set-level
thresholds and unit levels exactly over all processes; process 0 writes ``metrics.json``,
``units.json`` and the report, equal to a single-process run's. Inputs are checked
(:mod:`dissect.inputs`: the checkpoint opened once) before any frame is decoded.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

import numpy as np
import torch

from tsm_apps.data.protocol import TestProtocol
from tsm_apps.evaluation.scoring import fuse_views, top_k
from tsm_apps.progress import progress_bar

from .clips import ClipEntry, load_clip
from .distributed import DistEnv, barrier, env_from, pick_device, process_group, shard
from .faithfulness import clip_faithfulness, faithfulness_curves, softmax_scorer
from .flow_job import FlowStream, check_flow_inputs, flow_outputs
from .inputs import check_inputs
from .job_config import JobConfig, check_settings, protocol_options
from .layout import DissectionLayout
from .logs import file_log
from .methods import compute_clip_maps
from .metrics import centre_prior, clip_scores, random_map
from .overlay import overlay, strip, write_gif, write_png
from .sanity import randomized_copy, rank_correlation
from .storage import save_npz, write_json
from .summary import baseline_seed, dissect_run_units, summarise_run
from .threshold import fraction_of_max_mask

log = logging.getLogger("dissect")
SKIPPABLE = (RuntimeError, ValueError, OSError)  # VideoDecodeError is a RuntimeError


@dataclass
class JobResult:
    total: int
    done: int
    skipped: int
    failed: List[Tuple[str, str]] = field(default_factory=list)


@dataclass
class _Context:
    cfg: JobConfig
    lay: DissectionLayout
    model: torch.nn.Module
    random_model: Optional[torch.nn.Module]
    device: torch.device
    protocol: TestProtocol
    names: List[str] = field(default_factory=list)
    flow: Optional[FlowStream] = None

    def class_name(self, index: Optional[int]) -> Optional[str]:
        if index is None:
            return None
        return self.names[index] if self.names else f"class {index}"


def _maps_of(model, clip_input: torch.Tensor, cfg: JobConfig, cls=None):
    return compute_clip_maps(model, clip_input, cfg.method, cls, cfg.weighting)


def _scores(maps: np.ndarray, boxes: np.ndarray, active) -> dict:
    return clip_scores(maps, boxes, active, {"max20": fraction_of_max_mask(maps)})


def _record(ctx: _Context, entry: ClipEntry, indices: np.ndarray, res) -> dict:
    """The clip's JSON record: label, prediction, top-5 with names, the frames used."""
    top5 = top_k(fuse_views(res.logits[:1].detach().cpu(), ctx.protocol.fusion), ctx.names)
    label, cls = entry.label, int(res.classes[0])
    return {
        "id": entry.id,
        "path": entry.path,
        "label": label,
        "label_name": ctx.class_name(label),
        "pred": top5[0]["index"],
        "pred_name": top5[0]["name"],
        "top5": top5,
        "top5_hit": None if label is None else any(t["index"] == label for t in top5),
        "class": cls,
        "class_name": ctx.class_name(cls),
        "num_frames": entry.num_frames,
        "clip": entry.clip,
        "num_clips": entry.num_clips,
        "indices": indices.tolist(),
    }


def _add_faithfulness(ctx: _Context, x: torch.Tensor, classes, scores: dict, maps, seed) -> None:
    """Deletion/insertion curves of the clip ``x`` ``(1, T, 3, H, W)`` for its ``(T, H, W)``
    maps and its random map, into ``scores[kind]["faithfulness"]``."""
    score = softmax_scorer(ctx.model)
    for kind, m in (("method", maps), ("random", random_map(maps.shape, seed))):
        m = torch.from_numpy(np.ascontiguousarray(m))[None].to(x.device)
        curves = faithfulness_curves(x, m, score, classes, ctx.cfg.faithfulness_steps)
        scores[kind]["faithfulness"] = clip_faithfulness(curves)


def process_clip(ctx: _Context, entry: ClipEntry) -> dict:
    """Maps, overlays and scores of one clip; returns (and writes, last) its record."""
    cfg, k = ctx.cfg, ctx.model.config.num_classes
    if entry.label is not None and not 0 <= entry.label < k:
        raise ValueError(f"{entry.path}: label {entry.label} out of range for a {k}-class model")
    clip = load_clip(entry, ctx.model.num_segments, ctx.protocol)
    x = clip.input[None].to(ctx.device)
    res = _maps_of(ctx.model, x, cfg, cfg.class_index)
    maps = res.maps[0].cpu().numpy().astype(np.float32)
    t = maps.shape[0]
    boxes = clip.boxes if clip.boxes is not None else np.full((t, 4), np.nan)
    seed = baseline_seed(entry.id, cfg.seed)
    scores = {
        "method": _scores(maps, boxes, clip.active),
        "centre": _scores(centre_prior(maps.shape), boxes, clip.active),
        "random": _scores(random_map(maps.shape, seed), boxes, clip.active),
    }
    arrays = {
        "maps": maps,
        "lowres": res.lowres[0].cpu().numpy().astype(np.float32),
        "logits": res.logits[0].cpu().numpy(),
        "indices": clip.indices,
        "boxes": boxes,
        "active": (clip.active if clip.active is not None else np.zeros(0, bool)),
    }
    record = _record(ctx, entry, clip.indices, res)
    if cfg.faithfulness:
        _add_faithfulness(ctx, x, res.classes, scores, maps, seed)
    if ctx.random_model is not None:
        rnd = _maps_of(ctx.random_model, x, cfg, res.classes).maps[0].cpu().numpy()
        arrays["sanity_maps"] = rnd.astype(np.float16)
        scores["sanity"] = _scores(rnd, boxes, clip.active)
        record["sanity_rank_corr"] = rank_correlation(maps, rnd)
    record["scores"] = scores
    if ctx.flow is not None:
        flow_arrays, record["flow"] = flow_outputs(
            ctx.flow, clip, ctx.protocol, cfg.method, cfg.class_index, cfg.weighting, ctx.names
        )
        arrays.update(flow_arrays)
        scores["flow"] = _scores(flow_arrays["flow_maps"], boxes, clip.active)
    save_npz(ctx.lay.maps(entry.id), arrays)
    if cfg.overlays:
        ov = overlay(clip.frames, maps, "clip", boxes=boxes)
        write_png(ctx.lay.png(entry.id), strip(ov))
        write_gif(ctx.lay.gif(entry.id), ov)
        if ctx.flow is not None:
            write_png(
                ctx.lay.flow_png(entry.id),
                strip(overlay(clip.frames, arrays["flow_maps"], "clip", boxes=boxes)),
            )
    write_json(ctx.lay.record(entry.id), record)
    return record


def run_job(cfg: JobConfig, progress: bool = True, env: Optional[DistEnv] = None) -> JobResult:
    """Run (or resume) the job in this process, or as one rank of ``torchrun``/``srun`` (read
    from the environment unless ``env`` is given); then write ``metrics.json``, ``units.json``
    and the report (process 0). Inputs are checked (the checkpoint opened once, its model on
    this process's device) before any frame is decoded."""
    env = env or env_from()
    device = pick_device(cfg.device, env)
    checked = check_inputs(
        cfg.checkpoint,
        cfg.data,
        cfg.limit,
        cfg.class_index,
        cfg.classes,
        protocol_options(cfg),
        device,
        cfg.segments,
    )
    if cfg.flow_checkpoint:
        checked.flow = check_flow_inputs(
            cfg.flow_checkpoint, cfg.flow_data, checked, cfg.checkpoint, device
        )
    lay = DissectionLayout(cfg.out)
    check_settings(lay, cfg, write=False)
    with process_group(env, device):
        return _run(cfg, checked, lay, device, env, progress and env.is_main)


def _run(
    cfg: JobConfig,
    checked,
    lay: DissectionLayout,
    device: torch.device,
    env: DistEnv,
    progress: bool,
) -> JobResult:
    from .report import write_run_report

    barrier()  # every rank has checked run.json before rank 0 (re)writes it
    if env.is_main:
        lay.root.mkdir(parents=True, exist_ok=True)
        check_settings(lay, cfg, protocol=checked.protocol)
    barrier()
    model = checked.checkpoint.model
    rnd = randomized_copy(model, cfg.seed) if cfg.sanity else None
    flow = FlowStream(checked.flow.checkpoint.model, checked.flow) if checked.flow else None
    ctx = _Context(cfg, lay, model, rnd, device, checked.protocol, checked.names, flow)
    with file_log(lay.log if env.is_main else lay.root / f"job.rank{env.rank}.log", log):
        result = _loop(ctx, shard(checked.entries, env), progress)
        result.total = len(checked.entries)
        barrier()
        summarise_run(lay, cfg.threshold, cfg.seed, result, env)
        if cfg.units:
            dissect_run_units(
                lay,
                model,
                checked.entries,
                ctx.protocol,
                cfg.unit_clips,
                cfg.unit_quantile,
                device,
                progress,
                env,
            )
    if env.is_main:
        write_run_report(lay.root)
    return result


def _loop(ctx: _Context, entries: List[ClipEntry], progress: bool) -> JobResult:
    """Process this rank's clips; a finished clip (its record exists) is skipped."""
    result = JobResult(total=len(entries), done=0, skipped=0)
    for entry in progress_bar(entries, desc="dissect", unit="clip", enabled=progress):
        if ctx.lay.record(entry.id).is_file():
            result.skipped += 1
            continue
        try:
            process_clip(ctx, entry)
        except SKIPPABLE as e:
            log.warning("skipped %s: %s", entry.path, e)
            result.failed.append((entry.id, str(e)))
            write_json(ctx.lay.failed(entry.id), {"path": entry.path, "error": str(e)})
        else:
            result.done += 1
            ctx.lay.failed(entry.id).unlink(missing_ok=True)
    return result
