"""``tsm bench`` figures of the batched live engine (:mod:`tsm_apps.live.engine`): many online
streams of one model stepped as one batch against each stream stepped by itself.

Per architecture (random weights, 400 classes, online shift, the default protocol's 224 crop)
one :class:`~tsm_apps.live.engine.BatchedEngine` steps ``n`` streams a tick two ways: *batched*
(one ``step`` of ``n`` frames) and *alone* (``n`` steps of one stream, the same engine). Each side
owns its states; both get the same frames, prepared once before any timing (on the model's
device): only the engine step is timed. Every stream count and both sides of an architecture
run round-robin in one process (ratios: medians of per-round ratios). Both sides' outputs are
compared (``identical``, ``max_rel_diff``): the timed work is the same.

CPU: the engine's default kernels (rows equal alone to float rounding); the ``exact batching``
figures give what its bit-exact mode (:mod:`tsm_apps.live.exact`) costs: one batched step of 1
and 4 streams, exact / default engine, no goal. CUDA: a CUDA graph per batch bucket; goals: 16
streams >= 8x one stream's frames/s, at <= 3x its p95 step latency.
"""

from __future__ import annotations

import json
import logging
import os
import statistics
import subprocess
import sys
from dataclasses import asdict, dataclass

import numpy as np
import torch

from ..data.protocol import TestProtocol
from ..live.engine import BatchedEngine, Prepared
from ..live.exact import MKL_STRICT, check_exact
from ..live.recognition import RecognizerStepper
from ..models.recognizer import build_recognizer
from .cli import meets
from .timing import Figure, load_average, paired_ratio, time_rounds

log = logging.getLogger(__name__)

CLASSES, SEGMENTS = 400, 8
ARCHS = ("mobilenetv2", "resnet50")
STREAMS = (1, 4, 8, 16)
SCALE_GOAL, LATENCY_GOAL = ">= 8", "<= 3"  # CUDA: 16 streams against one
MODES = ("default", "exact")
KINDS = (("batched", True), ("alone", False))


@dataclass(frozen=True)
class Setting:
    """What a run measures; ``scale``: the frames' shorter side before the crop; ``exact``: the
    stream figures' engine in its exact mode; ``exact_*``: the exact mode's cost (CPU only)."""

    archs: tuple = ARCHS
    streams: tuple = STREAMS
    crop: int = 224
    scale: int = 256
    width: float = 1.0
    repeats: int = 10
    warmup: int = 2
    exact: bool = False
    exact_archs: tuple = ("resnet50", "mobilenetv2")
    exact_batches: tuple = (1, 4)
    exact_repeats: int = 5

    @property
    def protocol(self) -> TestProtocol:
        return TestProtocol(crop_size=self.crop, scale_size=self.scale)


FULL = Setting()
QUICK_CPU = Setting(
    archs=("mobilenetv2",), streams=(1, 4), repeats=3, warmup=1, exact_archs=("mobilenetv2",)
)
QUICK_CUDA = Setting(streams=(1, 4, 16), repeats=20, warmup=3, exact_archs=())


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
    """How two sides' outputs of every tick agree: ``identical`` (bit for bit), the largest
    absolute difference and that over the largest ``|logit|`` of ``b`` (``max_rel_diff``)."""
    if len(a.outputs) != len(b.outputs):
        raise ValueError(f"sides stepped {len(a.outputs)} and {len(b.outputs)} ticks")
    pairs = [(x, y) for ta, tb in zip(a.outputs, b.outputs) for x, y in zip(ta, tb)]
    diff = max(float((x - y).abs().max()) for x, y in pairs)
    scale = max(float(y.abs().max()) for _, y in pairs)
    return {
        "identical": all(torch.equal(x, y) for x, y in pairs),
        "max_abs_diff": diff,
        "max_rel_diff": diff / scale if scale > 0 else diff,
        "ticks": len(a.outputs),
    }


@torch.no_grad()
def measure_streams(arch: str, setting: Setting, device: str) -> dict:
    """Every stream count of ``setting``, batched and alone, round-robin on one engine:
    ``{arch, device, rounds (seconds a tick), rows {n: row}, load [before, after], ...}``."""
    stepper = build_stepper(arch, setting, device)
    engine = BatchedEngine(stepper, exact=setting.exact)
    bank = frame_bank(stepper, max(setting.streams), setting.scale)
    sides = {f"{k}_{n}": Side(engine, bank, n, b) for n in setting.streams for k, b in KINDS}
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
        "exact": engine.exact,
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


def _what(arch: str, words: str, crop: int, exact: bool = False) -> str:
    return f"({arch}, {words}, {crop}{', exact' if exact else ''})"


def stream_figures(result: dict, device: str) -> list[Figure]:
    """Per stream count the batched/alone frames/s ratio (goal on the CPU, n > 1: >= 1.0); with
    1 and 16 streams measured, 16 streams against one (goals on CUDA)."""
    rows, cpu = result["rows"], torch.device(device).type == "cpu"
    common = {k: result[k] for k in ("load", "threads", "cuda_graphs")}
    out = []
    for n, r in rows.items():
        goal, detail = (">= 1.0" if cpu and n > 1 else None), {**r, **common}
        if n == 1:
            detail["note"] = "1 stream: batched and alone are the same call (noise floor)"
        what = _what(result["arch"], f"{n} stream" + "s" * (n > 1), result["crop"], result["exact"])
        out.append(_figure(f"live batched/alone frames/s {what}", r["ratio"], goal, device, detail))
    if 1 in rows and 16 in rows:
        out += scale_figures(result, device, common)
    return out


def scale_figures(result: dict, device: str, common: dict) -> list[Figure]:
    """16 streams batched against 1 stream: frames/s (>= 8x) and p95 step latency (<= 3x); the
    goals apply on CUDA (CUDA graphs), the CPU figures are for information."""
    rounds, rows = result["rounds"], result["rows"]
    fps = 16 * paired_ratio(rounds, "batched_1", "batched_16")
    p95 = rows[16]["batched_p95_ms"] / rows[1]["batched_p95_ms"]
    detail = {
        **common,
        **{f"fps_{n}": rows[n]["batched_fps"] for n in (1, 16)},
        **{f"p95_ms_{n}": rows[n]["batched_p95_ms"] for n in (1, 16)},
    }
    cuda = torch.device(device).type == "cuda"
    what = _what(result["arch"], "batched", result["crop"], result["exact"])
    named = (
        (f"live 16 streams / 1 stream frames/s {what}", fps, SCALE_GOAL),
        (f"live p95 step latency 16 streams / 1 stream {what}", p95, LATENCY_GOAL),
    )
    return [_figure(n, v, g if cuda else None, device, detail) for n, v, g in named]


@torch.no_grad()
def exact_cost(arch: str, setting: Setting) -> list[Figure]:
    """One batched step of ``b`` streams (each of ``exact_batches``) on an exact engine / on a
    default one (two copies of the model: exact mode puts its trunk in NCHW), round-robin; no
    goal. Needs MKL's strict mode here (both sides run with it, as ``tsm live --exact`` does)."""
    engines = {
        m: BatchedEngine(build_stepper(arch, setting, "cpu"), exact=m == "exact") for m in MODES
    }
    bank = frame_bank(engines["default"].stepper, max(setting.exact_batches), setting.scale)
    batches = setting.exact_batches
    sides = {f"{m}_{b}": Side(e, bank, b, True) for b in batches for m, e in engines.items()}
    load = load_average()
    rounds = time_rounds(sides, setting.exact_repeats, 1)
    common = {"rounds": setting.exact_repeats, "threads": torch.get_num_threads()}
    common["load"] = [load, load_average()]
    out = []
    for b in setting.exact_batches:
        ms = {m: 1e3 * statistics.median(rounds[f"{m}_{b}"]) for m in MODES}
        detail = {
            **{f"{m}_ms_per_frame": v / b for m, v in ms.items()},
            **compare(sides[f"exact_{b}"], sides[f"default_{b}"]),
            **common,
        }
        r = paired_ratio(rounds, f"exact_{b}", f"default_{b}")
        what = _what(arch, f"batch {b}", setting.crop)
        name = f"exact batching CPU cost: exact/default step {what}"
        out.append(_figure(name, r, None, "cpu", detail))
    return out


def exact_figures(arch: str, setting: Setting) -> list[Figure]:
    """:func:`exact_cost` here if MKL's strict mode took in this process, otherwise in a child
    process started with it (MKL reads it only when it starts), on as many threads."""
    try:
        check_exact()
    except ValueError:
        return _in_child(arch, setting)
    return exact_cost(arch, setting)


def _in_child(arch: str, setting: Setting) -> list[Figure]:
    task = {"arch": arch, "setting": asdict(setting), "threads": torch.get_num_threads()}
    env = {**os.environ, MKL_STRICT[0]: MKL_STRICT[1]}
    cmd = [sys.executable, "-m", __name__, json.dumps(task)]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise RuntimeError(f"exact batching cost (child process) failed:\n{r.stderr[-3000:]}")
    return [Figure(**d) for d in json.loads(r.stdout.splitlines()[-1])]


def live_figures(setting: Setting, device: str) -> list[Figure]:
    """Every figure of ``setting`` on ``device`` (the exact mode's cost on the CPU only)."""
    out = []
    for arch in setting.archs:
        log.info("live streams %s on %s", arch, device)
        out += stream_figures(measure_streams(arch, setting, device), device)
    if torch.device(device).type == "cpu":
        for arch in setting.exact_archs:
            out += exact_figures(arch, setting)
    return out


def figures(quick: bool, device: str) -> list[Figure]:
    """The ``live`` entry of the ``tsm.bench`` group: quick on the CPU is MobileNetV2 with 1 and
    4 streams; full is MobileNetV2 and ResNet-50 with 1, 4, 8 and 16 streams."""
    cuda = torch.device(device).type == "cuda"
    setting = (QUICK_CUDA if cuda else QUICK_CPU) if quick else FULL
    return live_figures(setting, device)


if __name__ == "__main__":  # the child of exact_figures: one architecture's figures as JSON
    task = json.loads(sys.argv[1])
    torch.set_num_threads(task["threads"])
    kw = {k: tuple(v) if isinstance(v, list) else v for k, v in task["setting"].items()}
    print(json.dumps([f.to_dict() for f in exact_cost(task["arch"], Setting(**kw))]))
