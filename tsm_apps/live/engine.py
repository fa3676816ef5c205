"""One batched online step for many streams of one model.

Each stream owns its :class:`~tsm_apps.models.shift.state.ShiftState` (one row). A step takes
the newest frame of every stream in a group (frames of one input size), gathers their states into
one batch, steps the model once, and hands every stream its own row back: the result of each
stream is the result of stepping it alone.

* CPU: the step runs eagerly with the default kernels: each stream's answer equals its answer
  alone up to float rounding (the kernels pick their arithmetic by batch size). With
  ``exact=True`` (:mod:`.exact`: oneDNN off, NCHW, MKL's strict mode, heads a row at a time) it
  equals it bit for bit, at a cost in speed.
* CUDA: the step is replayed from a CUDA graph per (batch bucket, input shape, dtype, device,
  autocast state), captured through :class:`~tsm_apps.models.cuda_graph.CapturedCall` (on the
  model's device, one capture at a time, autocast-safe). A group of ``n`` streams takes the
  smallest bucket ``>= n``; the rows past ``n`` are padding, never read back.

What varies between models (a recognizer, a detector) is a :class:`Stepper`: how a frame becomes
an input row, the part of the step that runs on the batch (the graph's part), and what each row
yields.
"""

from __future__ import annotations

import logging
import statistics
import threading
import time
from collections import deque
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any, Optional, Protocol, Sequence

import numpy as np
import torch
from torch import Tensor, nn

from ..models.cuda_graph import CUDA, CapturedCall, CudaBackend, autocast_state
from ..models.online import static_state
from ..models.shift import ShiftState, stepping
from .exact import batch_invariant, check_exact, exact_model

log = logging.getLogger(__name__)
BUCKETS = (1, 2, 4, 8, 16, 32)
"""Batch sizes a CUDA graph is captured for; a group steps in the smallest that holds it."""
CPU_MAX_BATCH = 4
"""The largest batch a CPU steps at once (larger groups step in chunks): on 2 cores, batched
over alone, MobileNetV2 gained 1.36-1.72x at 4 streams a step, 1.03-1.20x at 8 and lost at 16
(0.92x); ResNet-50 1.30-1.39x at 4, 1.33-1.47x at 8 (benchmarks/bench_live_streams.py, three
runs; docs/results.md)."""


@dataclass
class Prepared:
    """A frame made ready for the model: ``input (1, 3, H, W)`` (on the CPU or the model's
    device), ``key`` (streams of one key step as one batch: the input's size) and ``meta``
    (what the stepper's ``finish`` needs of the frame, e.g. the detector's data sample)."""

    input: Tensor
    key: tuple
    meta: Any = None


class Stepper(Protocol):
    """A model family's online step (:class:`tsm_apps.live.recognition.RecognizerStepper`,
    :class:`tsm_apps.live.engine_file.EngineStepper`, ``detection.live.DetectorStepper``).

    ``model``: the network; ``modules``: its shift modules in registration order (``[]``: a
    TSN, nothing carried). ``device``: where the model lives. ``prepare(frame uint8 (H, W, 3) RGB)`` is
    called on the stepping thread; ``forward(batch (B, 3, H, W))`` runs inside a
    :func:`~tsm_apps.models.shift.state.stepping` block and returns a tuple of tensors with
    ``B`` rows (captured into a CUDA graph on CUDA); ``finish(outputs, prepared)`` turns the
    first ``len(prepared)`` rows into one result per stream.
    """

    model: nn.Module
    modules: Sequence[nn.Module]
    device: torch.device

    def prepare(self, frame: np.ndarray) -> Prepared: ...

    def forward(self, batch: Tensor) -> tuple: ...

    def finish(self, outputs: tuple, prepared: Sequence[Prepared]) -> list: ...


@dataclass
class _Graph:
    call: CapturedCall
    state: ShiftState  # the static buffers the graph reads and writes


@dataclass
class StepStats:
    """The last step: its batch size and milliseconds; the milliseconds of the last 100 steps
    (``recent``); counts over the engine's life."""

    batch: int = 0
    ms: float = 0.0
    steps: int = 0
    rows: int = 0
    graphs: int = 0
    sizes: dict = field(default_factory=dict)
    recent: deque = field(default_factory=lambda: deque(maxlen=100))

    @property
    def median_ms(self) -> Optional[float]:
        """The median step of the last 100 (None before one)."""
        return statistics.median(self.recent) if self.recent else None


class BatchedEngine:
    """Steps groups of streams of one :class:`Stepper` model (module docstring).

    ``graphs``: replay CUDA graphs (default: on CUDA). ``max_batch``: the largest group stepped
    at once (larger groups step in chunks; default :data:`CPU_MAX_BATCH` on the CPU, the largest
    bucket on a GPU). ``exact``: on the CPU, every row bit for bit as alone
    (:mod:`.exact`; the stepper's model is put in NCHW; ValueError if MKL is not in its strict
    mode). Thread-safe: one step at a time.
    """

    def __init__(
        self,
        stepper: Stepper,
        graphs: Optional[bool] = None,
        max_batch: Optional[int] = None,
        backend: CudaBackend = CUDA,
        exact: bool = False,
    ) -> None:
        cpu = torch.device(stepper.device).type == "cpu"
        max_batch = (CPU_MAX_BATCH if cpu else BUCKETS[-1]) if max_batch is None else max_batch
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch}")
        if exact and not cpu:
            log.warning(
                "exact batching is a CPU mode; on %s the engine steps as usual", stepper.device
            )
        self.exact = exact and cpu
        if self.exact:
            check_exact()
            exact_model(stepper.model)
        self.stepper = stepper
        self.modules = list(stepper.modules)
        self.backend = backend
        self.graphs = torch.device(stepper.device).type == "cuda" if graphs is None else graphs
        self.max_batch = max_batch
        self.lock = threading.Lock()
        self.stats = StepStats()
        self._graphs: dict = {}

    def new_state(self) -> ShiftState:
        """A stream's state before its first frame."""
        return ShiftState(len(self.modules))

    def step(self, states: Sequence[ShiftState], prepared: Sequence[Prepared]) -> list:
        """One result per stream, in order; each state advanced in place by one frame. The
        streams must share one ``key`` (ValueError naming the keys otherwise)."""
        if len(states) != len(prepared) or not states:
            raise ValueError(
                f"step needs one state per frame, got {len(states)} and {len(prepared)}"
            )
        keys = {p.key for p in prepared}
        if len(keys) != 1:
            raise ValueError(
                f"streams of one step need one input size, got {sorted(map(str, keys))}"
            )
        out = []
        for i in range(0, len(states), self.max_batch):
            out += self._step(states[i : i + self.max_batch], prepared[i : i + self.max_batch])
        return out

    @torch.no_grad()
    def _step(self, states: Sequence[ShiftState], prepared: Sequence[Prepared]) -> list:
        device = torch.device(self.stepper.device)
        with self.lock, batch_invariant(device) if self.exact else nullcontext():
            t0 = time.perf_counter()
            batch = torch.cat([p.input for p in prepared]).to(device, non_blocking=True)
            if self.graphs:
                outputs = self._replay(states, batch)
            else:
                outputs = self._eager(states, batch)
            results = self.stepper.finish(outputs, prepared)
            self._count(len(states), time.perf_counter() - t0)
        return results

    def _eager(self, states: Sequence[ShiftState], batch: Tensor) -> tuple:
        gathered = ShiftState.gather(states)
        with stepping(self.modules, gathered):
            outputs = self.stepper.forward(batch)
        for s, row in zip(states, gathered.split(len(states))):
            s.buffers = row.buffers
        return outputs

    def _graph_for(self, batch: Tensor, bucket: int) -> _Graph:
        shape = (bucket,) + tuple(batch.shape[1:])
        key = (shape, batch.dtype, batch.device, autocast_state(batch.device.type))
        g = self._graphs.get(key)
        if g is None:
            like = torch.zeros(shape, dtype=batch.dtype, device=batch.device)
            state = static_state(self.stepper.forward, self.modules, like)

            def run(x: Tensor) -> tuple:
                with stepping(self.modules, state):
                    return self.stepper.forward(x)

            g = self._graphs[key] = _Graph(CapturedCall(run, [like], backend=self.backend), state)
            self.stats.graphs = len(self._graphs)
        return g

    def _replay(self, states: Sequence[ShiftState], batch: Tensor) -> tuple:
        n = batch.shape[0]
        bucket = next(b for b in BUCKETS + (n,) if b >= n)
        g = self._graph_for(batch, bucket)
        for i, rows in enumerate(ShiftState.gather(states).buffers):
            if rows is None:
                g.state.buffers[i][:n].zero_()
            else:
                g.state.buffers[i][:n].copy_(rows)
        if bucket > n:
            pad = batch.new_zeros((bucket - n,) + tuple(batch.shape[1:]))
            batch = torch.cat([batch, pad])
        outputs = g.call(batch)
        for i, b in enumerate(g.state.buffers):  # one copy a block; each stream a row of it
            for s, row in zip(states, b[:n].clone().split(1)):
                s.buffers[i] = row
        return tuple(o[:n].clone() for o in outputs)

    def _count(self, n: int, seconds: float) -> None:
        st = self.stats
        st.batch, st.ms = n, 1000 * seconds
        st.recent.append(st.ms)
        st.steps += 1
        st.rows += n
        st.sizes[n] = st.sizes.get(n, 0) + 1

    def close(self) -> None:
        """Drop the captured graphs (their memory is freed with them)."""
        with self.lock:
            self._graphs.clear()
