"""Dissection batch job: maps, overlays and scores for every clip of a data set, resumably.

Each clip's outputs are written atomically and its record last (see :mod:`dissect.layout`), so a
killed job loses nothing already written and a re-run skips finished clips. A clip that cannot
be processed (unreadable video, label outside the model's classes, bad annotations) is a counted,
logged skip; the rest of the run completes. Settings that change the maps (checkpoint, data,
method, ...) must match a previous run in the same folder.
"""
from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import List, Optional, Tuple

import numpy as np
import torch
from tqdm import tqdm

from .clips import ClipEntry, load_clip, load_entries, resolve_data
from .gradcam import DEFAULT_WEIGHTING
from .layout import RunLayout
from .logs import file_log
from .methods import METHODS, compute_clip_maps
from .metrics import centre_prior, clip_scores, random_map
from .overlay import overlay, strip, write_gif, write_png
from .sanity import randomized_copy, rank_correlation
from .storage import read_json, save_npz, write_json
from .summary import baseline_seed, dissect_run_units, summarise_run
from .threshold import THRESHOLD_KINDS, fraction_of_max_mask
from .units import ND_QUANTILE

log = logging.getLogger("dissect")
SKIPPABLE = (RuntimeError, ValueError, OSError)  # VideoDecodeError is a RuntimeError


@dataclass
class JobConfig:
    """Everything ``tsm dissect run`` takes. ``size``: shorter-side resize + centre crop (None
    keeps the stored frames). ``class_index``: explain this class (default: the predicted one)."""
    checkpoint: str
    data: str
    out: str
    method: str = "cam"
    weighting: str = DEFAULT_WEIGHTING
    threshold: str = "dataset"
    limit: Optional[int] = None
    class_index: Optional[int] = None
    size: Optional[int] = None
    sanity: bool = True
    units: bool = True
    unit_clips: int = 32
    unit_quantile: float = ND_QUANTILE
    overlays: bool = True
    seed: int = 0
    device: str = "auto"

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"unknown method {self.method!r}; expected one of {METHODS}")
        if self.threshold not in THRESHOLD_KINDS:
            raise ValueError(f"unknown threshold {self.threshold!r}; expected {THRESHOLD_KINDS}")
        if self.limit is not None and self.limit < 1:
            raise ValueError(f"--limit must be >= 1, got {self.limit}")

    def settings(self) -> dict:
        """The fields a resumed run must share with the run that started the folder."""
        keys = ("method", "weighting", "class_index", "size", "sanity", "seed")
        out = {k: getattr(self, k) for k in keys}
        out["checkpoint"] = str(Path(self.checkpoint).resolve())
        out["data"] = str(resolve_data(self.data)[0].resolve())
        return out


@dataclass
class JobResult:
    total: int
    done: int
    skipped: int
    failed: List[Tuple[str, str]] = field(default_factory=list)


@dataclass
class _Context:
    cfg: JobConfig
    lay: RunLayout
    model: torch.nn.Module
    random_model: Optional[torch.nn.Module]
    device: torch.device
    size: Optional[int]


def pick_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def check_settings(lay: RunLayout, cfg: JobConfig) -> None:
    """Write ``run.json``, or check it against ``cfg`` when the folder holds a run."""
    want = cfg.settings()
    if lay.settings.is_file():
        have = read_json(lay.settings).get("settings", {})
        diff = {k: (have.get(k), v) for k, v in want.items() if have.get(k) != v}
        if diff:
            raise ValueError(f"{lay.root} holds a run with other settings {diff} "
                             "(existing, requested); use another --out")
    write_json(lay.settings, {"settings": want, "config": asdict(cfg)})


def check_classes(model: torch.nn.Module, cfg: JobConfig, data_classes: Optional[int]) -> None:
    k = model.config.num_classes
    if cfg.class_index is not None and not 0 <= cfg.class_index < k:
        raise ValueError(f"--class-index {cfg.class_index} out of range: checkpoint "
                         f"{cfg.checkpoint} has {k} classes (valid 0..{k - 1})")
    if data_classes is not None and data_classes != k:
        raise ValueError(f"checkpoint {cfg.checkpoint} does not match the data: the model has "
                         f"{k} classes, {cfg.data} has {data_classes}")


def _data_classes(data: str) -> Optional[int]:
    ann = resolve_data(data)[1]
    classes = read_json(ann).get("classes") if ann else None
    return len(classes) if classes else None


def _maps_of(model, clip_input: torch.Tensor, cfg: JobConfig, cls=None):
    return compute_clip_maps(model, clip_input, cfg.method, cls, cfg.weighting)


def _scores(maps: np.ndarray, boxes: np.ndarray, active) -> dict:
    return clip_scores(maps, boxes, active, {"max20": fraction_of_max_mask(maps)})


def process_clip(ctx: _Context, entry: ClipEntry) -> dict:
    """Maps, overlays and scores of one clip; returns (and writes, last) its record."""
    cfg, k = ctx.cfg, ctx.model.config.num_classes
    if not 0 <= entry.label < k:
        raise ValueError(f"{entry.path}: label {entry.label} out of range for a {k}-class model")
    clip = load_clip(entry, ctx.model.num_segments, ctx.size)
    x = clip.input[None].to(ctx.device)
    res = _maps_of(ctx.model, x, cfg, cfg.class_index)
    maps = res.maps[0].cpu().numpy().astype(np.float32)
    t = maps.shape[0]
    boxes = clip.boxes if clip.boxes is not None else np.full((t, 4), np.nan)
    seed = baseline_seed(entry.id, cfg.seed)
    scores = {"method": _scores(maps, boxes, clip.active),
              "centre": _scores(centre_prior(maps.shape), boxes, clip.active),
              "random": _scores(random_map(maps.shape, seed), boxes, clip.active)}
    arrays = {"maps": maps, "lowres": res.lowres[0].cpu().numpy().astype(np.float32),
              "logits": res.logits[0].cpu().numpy(), "indices": clip.indices, "boxes": boxes,
              "active": (clip.active if clip.active is not None else np.zeros(0, bool))}
    record = {"id": entry.id, "path": entry.path, "label": entry.label,
              "pred": int(res.logits[0].argmax()), "class": int(res.classes[0]),
              "indices": clip.indices.tolist()}
    if ctx.random_model is not None:
        rnd = _maps_of(ctx.random_model, x, cfg, res.classes).maps[0].cpu().numpy()
        arrays["sanity_maps"] = rnd.astype(np.float16)
        scores["sanity"] = _scores(rnd, boxes, clip.active)
        record["sanity_rank_corr"] = rank_correlation(maps, rnd)
    record["scores"] = scores
    save_npz(ctx.lay.maps(entry.id), arrays)
    if cfg.overlays:
        ov = overlay(clip.frames, maps, "clip", boxes=boxes)
        write_png(ctx.lay.png(entry.id), strip(ov))
        write_gif(ctx.lay.gif(entry.id), ov)
    write_json(ctx.lay.record(entry.id), record)
    return record


def _load_model(cfg: JobConfig, device: torch.device) -> torch.nn.Module:
    from tsm_apps.checkpoint.reading import load_checkpoint

    return load_checkpoint(cfg.checkpoint).to(device).eval()


def input_size(cfg: JobConfig) -> Optional[int]:
    """``--size``, else the crop size the checkpoint was trained at (``meta.train_config.size``),
    else ``None`` (frames as stored)."""
    if cfg.size is not None:
        return cfg.size
    from tsm_apps.checkpoint.reading import read_checkpoint

    train = read_checkpoint(cfg.checkpoint).get("meta", {}).get("train_config", {})
    return int(train["size"]) if isinstance(train, dict) and train.get("size") else None


def run_job(cfg: JobConfig, progress: bool = True) -> JobResult:
    """Run (or resume) the job; then write ``metrics.json``, ``units.json`` and the report."""
    from .report import write_run_report

    lay = RunLayout(cfg.out)
    lay.root.mkdir(parents=True, exist_ok=True)
    device = pick_device(cfg.device)
    model = _load_model(cfg, device)
    check_classes(model, cfg, _data_classes(cfg.data))
    entries = load_entries(cfg.data, cfg.limit)
    check_settings(lay, cfg)
    rnd = randomized_copy(model, cfg.seed) if cfg.sanity else None
    ctx = _Context(cfg, lay, model, rnd, device, input_size(cfg))
    with file_log(lay.log, log):
        result = _loop(ctx, entries, progress)
        summarise_run(lay, cfg.threshold, cfg.seed, result)
        if cfg.units:
            dissect_run_units(lay, model, entries, ctx.size, cfg.unit_clips, cfg.unit_quantile,
                              device, progress)
    write_run_report(lay.root)
    return result


def _loop(ctx: _Context, entries: List[ClipEntry], progress: bool) -> JobResult:
    index = read_json(ctx.lay.index) if ctx.lay.index.is_file() else {}
    result = JobResult(total=len(entries), done=0, skipped=0)
    for entry in tqdm(entries, desc="dissect", unit="clip", disable=not progress):
        if ctx.lay.record(entry.id).is_file():
            result.skipped += 1
            continue
        try:
            process_clip(ctx, entry)
        except SKIPPABLE as e:
            log.warning("skipped %s: %s", entry.path, e)
            result.failed.append((entry.id, str(e)))
            index[entry.id] = {"status": "failed", "path": entry.path, "error": str(e)}
        else:
            result.done += 1
            index[entry.id] = {"status": "done", "path": entry.path}
        write_json(ctx.lay.index, index)
    return result
