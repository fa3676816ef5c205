"""``tsm bench`` figures of the batched live engine (:mod:`tsm_apps.live.engine`): many online
streams of one model stepped as one batch against each stream stepped by itself.

Per architecture (random weights, 400 classes, online shift, the default protocol's 224 crop)
one :class:`~tsm_apps.live.engine.BatchedEngine` steps ``n`` streams a tick two ways: *batched*
(one ``step`` of ``n`` frames) and *alone* (``n`` steps of one stream, the same engine). Each side
owns its states; both get the same frames, prepared once before any timing (on the model's
device): only the engine step is timed. Every stream count and both sides of an architecture
run round-robin in one process (ratios: medians of per-round ratios). Both sides' outputs are
compared: ``identical`` in the detail says the timed work was equal (bit for bit on the CPU).

CPU: the engine steps with oneDNN off (batch-invariant); the ``batch-invariant`` figures give
that cost (one step at batch 1 and 4, oneDNN off / on, no goal). CUDA: a CUDA graph per batch
bucket; goals: 16 streams >= 8x one stream's frames/s, at <= 3x its p95 step latency.
"""

from __future__ import annotations

import logging
import statistics
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

import numpy as np
import torch

from ..data.protocol import TestProtocol
from ..live.engine import BatchedEngine, Prepared
from ..live.recognition import RecognizerStepper
from ..models.recognizer import build_recognizer
from ..models.stream_state import ShiftState, stepping
from .cli import meets
from .timing import Figure, load_average, paired_ratio, time_rounds

log = logging.getLogger(__name__)

CLASSES, SEGMENTS = 400, 8
ARCHS = ("mobilenetv2", "resnet50")
STREAMS = (1, 4, 8, 16)
SCALE_GOAL, LATENCY_GOAL = ">= 8", "<= 3"  # CUDA: 16 streams against one


@dataclass(frozen=True)
class Setting:
    """What a run measures; ``scale``: the frames' shorter side before the crop; the
    ``onednn_*`` fields: the oneDNN off/on cost (CPU only)."""

    archs: tuple = ARCHS
    streams: tuple = STREAMS
    crop: int = 224
    scale: int = 256
    width: float = 1.0
    repeats: int = 10
    warmup: int = 2
    onednn_archs: tuple = ("resnet50", "mobilenetv2")
    onednn_batches: tuple = (1, 4)
    onednn_repeats: int = 5

    @property
    def protocol(self) -> TestProtocol:
        return TestProtocol(crop_size=self.crop, scale_size=self.scale)


FULL = Setting()
QUICK_CPU = Setting(
    archs=("mobilenetv2",),
    streams=(1, 4),
    repeats=3,
    warmup=1,
    onednn_archs=("mobilenetv2",),
    onednn_repeats=3,
)
QUICK_CUDA = Setting(streams=(1, 4, 16), repeats=20, warmup=3, onednn_archs=())


def build_stepper(arch: str, setting: Setting, device: str) -> RecognizerStepper:
    """The online recognizer of ``arch`` (seed 0, random weights) as a stepper on ``device``."""
    torch.manual_seed(0)
    model = build_recognizer(arch, CLASSES, SEGMENTS, "online", width=setting.width)
    names = [f"class {i}" for i in range(CLASSES)]
    return RecognizerStepper(model.to(device).eval(), setting.protocol, names)


def frame_bank(stepper: RecognizerStepper, count: int, scale: int, seed: int = 0) -> list:
    """``count`` random uint8 frames (``scale`` x 4/3 ``scale``) prepared under the stepper's
    protocol, their inputs moved to the model's device."""
    rng = np.random.default_rng(seed)
    shape = (scale, scale * 4 // 3, 3)
    frames = [rng.integers(0, 256, shape, dtype=np.uint8) for _ in range(count)]
    return [
        Prepared(p.input.to(stepper.device), p.key, p.meta) for p in map(stepper.prepare, frames)
    ]


class Side:
    """``n`` streams stepped one tick per call, ``batched`` (one engine step) or alone (one step a
    stream); stream ``s`` takes ``bank[(s + tick) % len(bank)]`` at each tick. ``outputs``: each
    tick's results, one per stream."""

    def __init__(self, engine: BatchedEngine, bank: list, n: int, batched: bool) -> None:
        self.engine, self.n, self.batched = engine, n, batched
        self.states = [engine.new_state() for _ in range(n)]
        self.ticks = [[bank[(s + t) % len(bank)] for s in range(n)] for t in range(len(bank))]
        self.outputs: list = []

    def __call__(self) -> None:
        frames = self.ticks[len(self.outputs) % len(self.ticks)]
        if self.batched:
            out = self.engine.step(self.states, frames)
        else:
            out = [self.engine.step([s], [f])[0] for s, f in zip(self.states, frames)]
        self.outputs.append(out)


def compare(a: Side, b: Side) -> dict:
    """Whether two sides' outputs of every tick are equal: ``identical`` and ``max_abs_diff``."""
    if len(a.outputs) != len(b.outputs):
        raise ValueError(f"sides stepped {len(a.outputs)} and {len(b.outputs)} ticks")
    pairs = [(x, y) for ta, tb in zip(a.outputs, b.outputs) for x, y in zip(ta, tb)]
    return {
        "identical": all(torch.equal(x, y) for x, y in pairs),
        "max_abs_diff": max(float((x - y).abs().max()) for x, y in pairs),
        "ticks": len(a.outputs),
    }


@torch.no_grad()
def measure_streams(arch: str, setting: Setting, device: str) -> dict:
    """Every stream count of ``setting``, batched and alone, round-robin on one engine:
    ``{arch, device, rounds (seconds a tick), rows {n: row}, load [before, after], ...}``."""
    stepper = build_stepper(arch, setting, device)
    engine = BatchedEngine(stepper)
    bank = frame_bank(stepper, max(setting.streams), setting.scale)
    sides = {}
    for n in setting.streams:
        sides[f"batched_{n}"] = Side(engine, bank, n, True)
        sides[f"alone_{n}"] = Side(engine, bank, n, False)
    load = load_average()
    try:
        rounds = time_rounds(sides, setting.repeats, setting.warmup, device)
    finally:
        engine.close()
    result = {
        "arch": arch,
        "device": device,
        "crop": setting.crop,
        "width": setting.width,
        "threads": torch.get_num_threads(),
        "cuda_graphs": engine.graphs,
        "rounds": rounds,
        "load": [load, load_average()],
    }
    result["rows"] = {
        n: {**row(rounds, n), **compare(sides[f"batched_{n}"], sides[f"alone_{n}"])}
        for n in setting.streams
    }
    return result


def row(rounds: dict, n: int) -> dict:
    """One stream count's figures from :func:`time_rounds` seconds a tick: frames/s of each side,
    batched/alone frames/s (median of per-round ratios), the batched step's p50/p95 ms."""
    b, a = rounds[f"batched_{n}"], rounds[f"alone_{n}"]
    return {
        "streams": n,
        "alone_fps": n / statistics.median(a),
        "batched_fps": n / statistics.median(b),
        "ratio": paired_ratio(rounds, f"alone_{n}", f"batched_{n}"),
        "batched_p50_ms": 1e3 * float(np.percentile(b, 50)),
        "batched_p95_ms": 1e3 * float(np.percentile(b, 95)),
        "alone_tick_ms": 1e3 * statistics.median(a),
        "rounds": len(b),
    }


def _figure(name: str, value: float, goal: str | None, device: str, detail: dict) -> Figure:
    return Figure(name, value, "x", goal, meets(value, goal), device, detail)


def stream_figures(result: dict, device: str) -> list[Figure]:
    """Per stream count the batched/alone frames/s ratio (goal on the CPU, n > 1: >= 1.0); with
    1 and 16 streams measured, 16 streams against one (goals on CUDA)."""
    arch, crop, rows = result["arch"], result["crop"], result["rows"]
    cpu = torch.device(device).type == "cpu"
    common = {k: result[k] for k in ("load", "threads", "cuda_graphs")}
    out = []
    for n, r in rows.items():
        goal = ">= 1.0" if cpu and n > 1 else None
        note = (
            {"note": "1 stream: batched and alone are the same call (noise floor)"}
            if n == 1
            else {}
        )
        name = f"live batched/alone frames/s ({arch}, {n} stream{'s' * (n > 1)}, {crop})"
        out.append(_figure(name, r["ratio"], goal, device, {**r, **common, **note}))
    if 1 in rows and 16 in rows:
        out += scale_figures(result, device, common)
    return out


def scale_figures(result: dict, device: str, common: dict) -> list[Figure]:
    """16 streams batched against 1 stream: frames/s (>= 8x) and p95 step latency (<= 3x); the
    goals apply on CUDA (CUDA graphs), the CPU figures are for information."""
    arch, crop, rounds, rows = result["arch"], result["crop"], result["rounds"], result["rows"]
    fps = 16 * paired_ratio(rounds, "batched_1", "batched_16")
    p95 = rows[16]["batched_p95_ms"] / rows[1]["batched_p95_ms"]
    detail = {
        **common,
        **{f"fps_{n}": rows[n]["batched_fps"] for n in (1, 16)},
        **{f"p95_ms_{n}": rows[n]["batched_p95_ms"] for n in (1, 16)},
    }
    cuda = torch.device(device).type == "cuda"
    what = f"({arch}, batched, {crop})"
    return [
        _figure(
            f"live 16 streams / 1 stream frames/s {what}",
            fps,
            SCALE_GOAL if cuda else None,
            device,
            detail,
        ),
        _figure(
            f"live p95 step latency 16 streams / 1 stream {what}",
            p95,
            LATENCY_GOAL if cuda else None,
            device,
            detail,
        ),
    ]


@contextmanager
def onednn(on: bool) -> Iterator[None]:
    """oneDNN on or off for the block (``torch.backends.mkldnn.enabled``, restored after)."""
    before = torch.backends.mkldnn.enabled
    torch.backends.mkldnn.enabled = on
    try:
        yield
    finally:
        torch.backends.mkldnn.enabled = before


def _forward(stepper: RecognizerStepper, x: torch.Tensor, on: bool):
    """The stepper's forward of ``x`` (a batch of frames, buffers carried), oneDNN ``on``/off."""
    state = ShiftState(len(stepper.modules))

    def run() -> None:
        with onednn(on), stepping(stepper.modules, state):
            stepper.forward(x)

    return run


@torch.no_grad()
def onednn_cost(arch: str, setting: Setting) -> list[Figure]:
    """On the CPU, the step's time with oneDNN off / on at each batch of ``setting`` (what a
    bit-exact batched step costs; the engine steps with it off), no goal."""
    stepper = build_stepper(arch, setting, "cpu")
    bank = frame_bank(stepper, max(setting.onednn_batches), setting.scale)
    fns = {}
    for b in setting.onednn_batches:
        x = torch.cat([p.input for p in bank[:b]])
        fns[f"on_{b}"], fns[f"off_{b}"] = _forward(stepper, x, True), _forward(stepper, x, False)
    load = load_average()
    rounds = time_rounds(fns, setting.onednn_repeats, 1)
    load = [load, load_average()]
    out = []
    for b in setting.onednn_batches:
        ms = {k: 1e3 * statistics.median(rounds[f"{k}_{b}"]) for k in ("on", "off")}
        r = paired_ratio(rounds, f"off_{b}", f"on_{b}")
        detail = {
            **{f"{k}_ms": v for k, v in ms.items()},
            **{f"{k}_ms_per_frame": v / b for k, v in ms.items()},
            **{"rounds": setting.onednn_repeats, "threads": torch.get_num_threads(), "load": load},
        }
        name = f"batch-invariant CPU step: oneDNN off/on time ({arch}, batch {b}, {setting.crop})"
        out.append(_figure(name, r, None, "cpu", detail))
    return out


def live_figures(setting: Setting, device: str) -> list[Figure]:
    """Every figure of ``setting`` on ``device`` (the oneDNN cost on the CPU only)."""
    out = []
    for arch in setting.archs:
        log.info("live streams %s on %s", arch, device)
        out += stream_figures(measure_streams(arch, setting, device), device)
    if torch.device(device).type == "cpu":
        for arch in setting.onednn_archs:
            out += onednn_cost(arch, setting)
    return out


def figures(quick: bool, device: str) -> list[Figure]:
    """The ``live`` entry of the ``tsm.bench`` group: quick on the CPU is MobileNetV2 with 1 and
    4 streams; full is MobileNetV2 and ResNet-50 with 1, 4, 8 and 16 streams."""
    cuda = torch.device(device).type == "cuda"
    setting = (QUICK_CUDA if cuda else QUICK_CPU) if quick else FULL
    return live_figures(setting, device)
