"""tsm live: online TSM on cameras, network streams and videos of any length, every stream of a
model stepped in one batch.

``tsm live SOURCE... --checkpoint CK`` streams the recognizer (a TSM checkpoint with the causal
shift, a TSN frame by frame, or an online engine file ``.onnx`` written by ``tsm export --online
--engine onnxruntime``, run by ONNX Runtime on the CPU) over every source at once; ``--detector RUN`` streams the online
detector too (its package plugs it in through the ``tsm.live`` entry points). One JSON line per
answered frame goes to stdout or ``--out``, with the fields ``stream`` (the source as given, ``#2`` added to a repeated one),
``model`` (``recognizer``, ``detector``), ``frame`` (0-based index in the source), ``pts``
(the source's timestamp in seconds, null if none), ``model_ms`` and ``batch`` (the batched
step's milliseconds and number of streams), ``latency_ms`` (capture to answer), ``dropped``
(the stream's frames replaced before the model took them, so far), then the model's: ``top``
and ``window`` (``[{"class", "index", "prob"}]``, the top-k of the frame and of the running
window) for the recognizer, ``boxes`` for the detector. ``--render DIR`` writes each stream's
video with the answers drawn; ``--timeline DIR`` a Plotly timeline of the running top-k over
each whole source. Runs until every source ends, or Ctrl-C (the files written so far are
finished and kept); memory stays flat whatever the length. Network URLs of any host are opened
(the user is the machine's operator), under the schemes and time limits of
:class:`~tsm_apps.live.policy.StreamPolicy`.

Exit status: 0 when every source was read to its end (or ``--max-frames``); 1 when a stream
stopped on an error (a URL that does not answer, a stream that stalls or cannot be decoded),
each told in one line naming it while the others went on; 2 for bad input found before any
model loads (a missing or unreadable file, an unknown scheme, a bad option); 130 on Ctrl-C.
"""

from __future__ import annotations

import dataclasses
import logging
import queue
import re
import sys
import threading
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Optional

from ..options import add_options, option, options_from
from ..progress import progress_bar
from .output import JsonLines, LiveModel, StreamOutputs
from .policy import CONNECT_TIMEOUT, READ_TIMEOUT
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
    checkpoint: Optional[str] = field(
        default=None,
        **option("a recognizer checkpoint, or an online engine file (.onnx, tsm export --online)"),
    )
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
    max_batch: Optional[int] = field(
        default=None,
        **option("streams stepped at once, at most (default: 4 on a CPU, 32 on a GPU)"),
    )
    exact: bool = field(
        default=False,
        **option(
            "on the CPU, each stream's answer in a batch bit for bit its answer alone (slower)"
        ),
    )
    connect_timeout: float = field(
        default=CONNECT_TIMEOUT, **option("seconds a URL or camera may take to answer")
    )
    read_timeout: float = field(
        default=READ_TIMEOUT, **option("seconds without data before a stream counts as stalled")
    )
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
    """A file-name stem for a source (unique among ``used``): a file's stem, a URL's last path
    part or its host and port."""
    host, _, path = spec.split("://")[-1].split("?")[0].partition("/")
    base = (Path(path).stem or host) if "://" in spec else Path(spec).stem
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", base).strip("._")[:60] or "stream"
    name, k = base, 1
    while name in used:
        k += 1
        name = f"{base}_{k}"
    used.add(name)
    return name


def _check(cfg: LiveConfig) -> None:
    if cfg.top_k < 1 or cfg.window < 1 or (cfg.max_batch is not None and cfg.max_batch < 1):
        raise ValueError("--top-k, --window and --max-batch must be >= 1")
    if cfg.max_frames is not None and cfg.max_frames < 1:
        raise ValueError(f"--max-frames must be >= 1, got {cfg.max_frames}")
    if not (cfg.connect_timeout > 0 and cfg.read_timeout > 0):
        raise ValueError("--connect-timeout and --read-timeout must be > 0")
    if cfg.detector and not cfg.detector_checkpoint and Path(cfg.detector).is_file():
        raise ValueError(f"--detector {cfg.detector} is a config file: give --detector-checkpoint")


def _open_sources(cfg: LiveConfig) -> list:
    """Every source, checked (files and folders read, URLs judged) before any model loads:
    a bad one is a ValueError naming it (exit 2)."""
    from .policy import StreamPolicy
    from .sources import SourceError, open_source

    policy = StreamPolicy.open_all(cfg.connect_timeout, cfg.read_timeout)
    sources, seen = [], {}
    for spec in cfg.sources:
        try:
            src = open_source(spec, policy, cfg.realtime, cfg.max_side)
        except SourceError as e:
            raise ValueError(str(e)) from None
        seen[spec] = seen.get(spec, 0) + 1
        if seen[spec] > 1:  # the same source twice: two streams, told apart
            src.name = f"{spec}#{seen[spec]}"
        sources.append(src)
    return sources


def run(cfg: LiveConfig) -> dict:
    """Stream every source through every model (module docstring); returns each stream's
    figures (:meth:`~tsm_apps.live.stream.LiveStream.figures`) by ``"<source> [<model>]"``."""
    from ..distributed import env_from, pick_device
    from .engine import BatchedEngine
    from .exact import request_strict_mkl
    from .scheduler import Scheduler
    from .sources import pump

    _check(cfg)
    if cfg.exact:
        request_strict_mkl()  # read by MKL when it starts: before any model is built
    sources = _open_sources(cfg)
    models = _models(cfg, pick_device(cfg.device, env_from({})))
    results: queue.Queue = queue.Queue(maxsize=QUEUE)
    schedulers = []
    for m in models:
        engine = BatchedEngine(m.stepper, max_batch=cfg.max_batch, exact=cfg.exact)
        schedulers.append(Scheduler(engine, m.name).start())
    streams, used, pumps = {}, set(), []
    try:
        for src in sources:
            stem, mine = _stem(src.name, used), []
            for m, sched in zip(models, schedulers):
                key, out = len(streams), _outputs(cfg, m, src, stem)
                lean = not out.wants_pixels
                s = sched.open(
                    src.name, lambda r, k=key, t=lean: results.put((k, _lean(r, t))), _report
                )
                streams[key] = (s, out)
                mine.append(s)
            pumps.append(pump(src, mine, cfg.max_frames))
        _drain(cfg, results, streams, schedulers)
        for t in pumps:  # each stream's error, if any, is set when its pump ends
            t.join()
    finally:
        _close(schedulers, results)
        for s, out in streams.values():
            out.close(s.name)
    return {f"{s.name} [{out.model.name}]": s.figures() for s, out in streams.values()}


QUEUE = 64  # answers waiting for the writer, at most (the model waits beyond)


def _lean(result, lean: bool):
    """``result`` without its frame's pixels when nothing draws on them (the queue then holds
    no images)."""
    if not lean:
        return result
    return dataclasses.replace(result, frame=dataclasses.replace(result.frame, image=None))


def _outputs(cfg: LiveConfig, model: LiveModel, source, stem: str) -> StreamOutputs:
    video = Path(cfg.render) / f"{stem}.{model.name}.mp4" if cfg.render else None
    timeline = None
    if cfg.timeline and model.name == "recognizer":
        timeline = Path(cfg.timeline) / f"{stem}.timeline.html"
    return StreamOutputs(model, lambda: source.fps, video, timeline)


def _report(message: str) -> None:
    log.error("%s", message)


def _close(schedulers: list, results: queue.Queue, write=None) -> None:
    """Stop the schedulers; answers they still put are handed to ``write`` (dropped if None)
    meanwhile, so a full queue never holds a scheduler up."""
    closers = [threading.Thread(target=s.close, daemon=True) for s in schedulers]
    for t in closers:
        t.start()
    while any(t.is_alive() for t in closers) or not results.empty():
        try:
            item = results.get(timeout=0.05)
        except queue.Empty:
            continue
        if write is not None:
            write(item)


def _drain(cfg: LiveConfig, results: queue.Queue, streams: dict, schedulers: list) -> None:
    """Write every answer as it arrives until all streams are done, then the last ones."""
    lines = JsonLines(cfg.out)
    bar = progress_bar(desc="tsm live", unit="frame", enabled=cfg.progress)

    def write(item) -> None:
        key, r = item
        streams[key][1].write(r, lines)
        bar.update(1)

    try:
        while not all(s.done or not s.open for s, _ in streams.values()):
            try:
                write(results.get(timeout=0.2))
            except queue.Empty:
                continue
        _close(schedulers, results, write)  # a step under way when the last stream ended
    finally:
        bar.close()
        lines.close()


def _summary(figures: dict) -> None:
    for name, f in figures.items():
        p50, p95 = f["latency_p50_ms"], f["latency_p95_ms"]
        lat = "-" if p50 is None else f"{p50:.0f} / {p95:.0f} ms"
        err = "; stopped on the error above" if f["error"] else ""
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
