"""Side-by-side timing: median of repeated, interleaved runs after warm-up.

Used by ``tsm bench`` and the scripts under ``benchmarks/``. Timings are figures to print, never
test assertions.
"""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Optional

import torch


def synchronize(device: torch.device | str | None) -> None:
    """Wait for ``device``'s queued work (CUDA); nothing elsewhere."""
    if device is not None and torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def time_rounds(
    fns: dict, repeats: int = 10, warmup: int = 2, device: torch.device | str | None = None
) -> dict:
    """Seconds of each ``{name: fn}`` per round, ``{name: [s, ...]}``: the functions run
    round-robin (one call each per round) so drift hits all equally, and round ``r`` starts
    at the ``r % n``-th function so none always runs right after the same other one (a model
    timed after another model pays that model's cache and allocator state)."""
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    names = list(fns)
    times: dict = {k: [] for k in names}
    for r in range(repeats):
        for k in names[r % len(names) :] + names[: r % len(names)]:
            synchronize(device)
            t0 = time.perf_counter()
            fns[k]()
            synchronize(device)
            times[k].append(time.perf_counter() - t0)
    return times


def time_many(
    fns: dict, repeats: int = 10, warmup: int = 2, device: torch.device | str | None = None
) -> dict:
    """Median seconds of each ``{name: fn}``, run round-robin so drift hits all equally."""
    return medians(time_rounds(fns, repeats, warmup, device))


def medians(rounds: dict) -> dict:
    """``{name: median seconds}`` of :func:`time_rounds`' output."""
    return {k: statistics.median(v) for k, v in rounds.items()}


def round_ratios(rounds: dict, a: str, b: str) -> list:
    """``a``'s time / ``b``'s time in each round of :func:`time_rounds`' output."""
    return [x / y for x, y in zip(rounds[a], rounds[b])]


def paired_ratio(rounds: dict, a: str, b: str) -> float:
    """Median over rounds of ``a``'s time / ``b``'s time in the same round (robust to drift)."""
    return statistics.median(round_ratios(rounds, a, b))


def time_pair(
    fn_a: Callable[[], object],
    fn_b: Callable[[], object],
    repeats: int = 10,
    warmup: int = 2,
    device: torch.device | str | None = None,
) -> tuple:
    """Median seconds of ``fn_a`` and ``fn_b``, run alternately so drift hits both equally."""
    t = time_many({"a": fn_a, "b": fn_b}, repeats, warmup, device)
    return t["a"], t["b"]


def meets(value: float, goal: str | None) -> bool | None:
    """Whether ``value`` meets a goal written ``'<= 1.05'`` or ``'>= 1.5'`` (None otherwise)."""
    parts = (goal or "").split()
    if len(parts) < 2 or parts[0] not in ("<=", ">="):
        return None
    try:
        bound = float(parts[1])
    except ValueError:
        return None
    return value <= bound if parts[0] == "<=" else value >= bound


def load_average() -> float:
    """The 1-minute load average (0.0 where the platform has none): state it with timings."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return 0.0


def time_one(
    fn: Callable[[], object],
    repeats: int = 10,
    warmup: int = 2,
    device: torch.device | str | None = None,
) -> float:
    """Median seconds of ``fn``."""
    return time_pair(fn, lambda: None, repeats, warmup, device)[0]


@dataclass
class Figure:
    """One measured figure of ``tsm bench``."""

    name: str
    value: float
    unit: str
    goal: Optional[str] = None
    met: Optional[bool] = None
    device: str = "cpu"
    detail: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)
