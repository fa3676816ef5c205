"""tsm live: online TSM on cameras, network streams and videos of any length, every stream of a
model stepped in one batch.

``tsm live SOURCE... --checkpoint CK`` streams the recognizer (a TSM checkpoint with the causal
shift, a TSN frame by frame) over every source at once; ``--detector RUN`` streams the online
detector too (its package plugs it in through the ``tsm.live`` entry points). One JSON line per
answered frame goes to stdout or ``--out``: stream, model, frame index, source timestamp, top-k of
the frame and of the running window (or boxes), the batched step's milliseconds, capture-to-answer
latency, frames dropped so far. ``--render DIR`` writes each stream's video with the answers drawn;
``--timeline DIR`` a Plotly timeline of the running top-k over each whole source. Runs until every
source ends, or Ctrl-C (the files written so far are finished and kept); memory stays flat
whatever the length.
"""

from __future__ import annotations

import logging
import queue
import re
import sys
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Optional

from ..options import add_options, option, options_from
from ..progress import progress_bar
from .output import JsonLines, LiveModel, Renderer, Timeline, frame_record
from .recognition import WINDOW

log = logging.getLogger(__name__)
GROUP = "tsm.live"  # entry points: name -> loader(spec, checkpoint, device, cfg) -> LiveModel


@dataclass
class LiveConfig:
    """Everything ``tsm live`` takes (one field a flag, see :mod:`tsm_apps.options`)."""

    sources: list = field(
        default_factory=list,
        **option(
            "video files, frame folders, stream URLs (rtsp://, http(s)://, udp://, srt://, "
            "rtmp://) or cameras (camera:0, /dev/video0)",
            positional=True,
            nargs="+",
        ),
    )
    checkpoint: Optional[str] = None
    detector: Optional[str] = field(
        default=None,
        **option("stream the online detector of this training folder (config.py + final.pth)"),
    )
    detector_checkpoint: Optional[str] = field(
        default=None, **option("--detector: its checkpoint when --detector is a config file")
    )
    out: Optional[str] = field(default=None, **option("JSON lines here (default: stdout)"))
    render: Optional[str] = field(
        default=None, **option("a folder: one video per source and model, answers drawn")
    )
    timeline: Optional[str] = field(
        default=None, **option("a folder: one HTML timeline of the running top-k per source")
    )
    top_k: int = field(default=5, **option("classes listed per frame"))
    window: int = field(default=WINDOW, **option("frames averaged for the running answer"))
    score_thr: float = field(default=0.3, **option("--detector: boxes scoring at least this"))
    realtime: bool = field(
        default=False,
        **option(
            "play files at their own rate, dropping frames the model cannot keep up with "
            "(default: every frame, as fast as the model goes)"
        ),
    )
    max_frames: Optional[int] = field(default=None, **option("stop each source after N frames"))
    max_side: Optional[int] = field(
        default=None, **option("decode frames larger than this (pixels, longer side) downscaled")
    )
    max_batch: int = field(default=32, **option("streams stepped at once, at most"))
    device: str = "auto"
    progress: bool = True


def build_parser():
    import argparse

    p = argparse.ArgumentParser(prog="tsm live", description=__doc__.splitlines()[0])
    return add_options(p, LiveConfig)


def _models(cfg: LiveConfig, device) -> list:
    from .recognition import live_model

    models = []
    if cfg.checkpoint:
        models.append(live_model(cfg.checkpoint, device, cfg.top_k, cfg.window))
    if cfg.detector:
        found = {ep.name: ep for ep in entry_points(group=GROUP)}
        if "detector" not in found:
            raise ValueError("--detector needs the detection package (tsm.live entry point)")
        models.append(found["detector"].load()(cfg.detector, cfg.detector_checkpoint, device, cfg))
    if not models:
        raise ValueError("give --checkpoint (a recognizer) and/or --detector (a detector run)")
    return models


def _stem(spec: str, used: set) -> str:
    """A file-name stem for a source (unique among ``used``)."""
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(spec.split("?")[0]).stem or spec)[:60] or "stream"
    name, k = base, 1
    while name in used:
        k += 1
        name = f"{base}_{k}"
    used.add(name)
    return name


@dataclass
class _Stream:
    """What the main thread keeps of one (source, model) stream."""

    model: LiveModel
    reader: object
    renderer: Optional[Renderer] = None
    timeline: Optional[Timeline] = None
    timeline_path: Optional[Path] = None


def _check(cfg: LiveConfig) -> None:
    if cfg.top_k < 1 or cfg.window < 1 or cfg.max_batch < 1:
        raise ValueError("--top-k, --window and --max-batch must be >= 1")
    if cfg.max_frames is not None and cfg.max_frames < 1:
        raise ValueError(f"--max-frames must be >= 1, got {cfg.max_frames}")
    if cfg.detector and not cfg.detector_checkpoint and Path(cfg.detector).is_file():
        raise ValueError(f"--detector {cfg.detector} is a config file: give --detector-checkpoint")


def run(cfg: LiveConfig) -> dict:
    """Stream every source through every model (module docstring); returns each stream's
    figures."""
    from ..distributed import env_from, pick_device
    from .engine import BatchedEngine
    from .policy import StreamPolicy
    from .scheduler import Scheduler
    from .sources import open_source, pump

    _check(cfg)
    sources = [
        open_source(s, StreamPolicy.open_all(), cfg.realtime, cfg.max_side) for s in cfg.sources
    ]
    models = _models(cfg, pick_device(cfg.device, env_from({})))
    results: queue.Queue = queue.Queue(maxsize=256)
    schedulers = [
        Scheduler(BatchedEngine(m.stepper, max_batch=cfg.max_batch), m.name).start() for m in models
    ]
    streams, used, threads = {}, set(), []
    try:
        for src in sources:
            stem, mine = _stem(src.name, used), []
            for m, sched in zip(models, schedulers):
                key = len(streams)
                s = sched.open(src.name, lambda r, k=key: results.put((k, r)), _report)
                streams[key] = (s, _outputs(cfg, m, stem, src.fps))
                mine.append(s)
            threads.append(pump(src, mine, cfg.max_frames))
        _drain(cfg, results, streams)
    finally:
        for sched in schedulers:
            sched.close()
        for s, out in streams.values():
            if out.renderer is not None:
                out.renderer.close()
    return {f"{s.name} [{out.model.name}]": s.figures() for s, out in streams.values()}


def _outputs(cfg: LiveConfig, model: LiveModel, stem: str, fps: Optional[float]) -> _Stream:
    out = _Stream(model, model.reader())
    if cfg.render:
        out.renderer = Renderer(Path(cfg.render) / f"{stem}.{model.name}.mp4", fps or 25.0)
    if cfg.timeline and model.name == "recognizer":
        out.timeline = Timeline(model.stepper.names)
        out.timeline_path = Path(cfg.timeline) / f"{stem}.timeline.html"
    return out


def _report(message: str) -> None:
    log.error("%s", message)


def _drain(cfg: LiveConfig, results: queue.Queue, streams: dict) -> None:
    """Write every result as it arrives until all streams are done."""
    lines = JsonLines(cfg.out)
    bar = progress_bar(desc="tsm live", unit="frame", enabled=cfg.progress)
    try:
        while True:
            try:
                key, r = results.get(timeout=0.2)
            except queue.Empty:
                if all(s.done for s, _ in streams.values()) and results.empty():
                    break
                continue
            out = streams[key][1]
            record = {**frame_record(r, out.model.name), **out.reader.record(r)}
            lines.write(record)
            bar.update(1)
            if out.renderer is not None:
                out.renderer.write(out.reader.draw(r.frame.image, record))
            if out.timeline is not None and "window" in record:
                out.timeline.add(record["frame"], record["pts"], record["window"])
    finally:
        bar.close()
        lines.close()
        for s, out in streams.values():
            if out.timeline is not None and len(out.timeline.frames):
                out.timeline.write(out.timeline_path, s.name)


def _summary(figures: dict) -> None:
    for name, f in figures.items():
        p50, p95 = f["latency_p50_ms"], f["latency_p95_ms"]
        lat = "-" if p50 is None else f"{p50:.0f} / {p95:.0f} ms"
        err = f"; stopped: {f['error']}" if f["error"] else ""
        print(
            f"tsm live: {name}: {f['stepped']} frames answered, {f['dropped']} dropped, "
            f"latency p50/p95 {lat}{err}",
            file=sys.stderr,
        )


def main(argv: Optional[list] = None) -> int:
    cfg = options_from(LiveConfig, build_parser().parse_args(argv))
    figures = run(cfg)
    _summary(figures)
    return 1 if any(f["error"] for f in figures.values()) else 0
