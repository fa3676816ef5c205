"""Side-by-side timing: median of repeated, interleaved runs after warm-up.

Used by ``tsm bench`` and the scripts under ``benchmarks/``. Timings are figures to print, never
test assertions.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Optional

import torch


def _sync(device: torch.device | str | None) -> None:
    if device is not None and torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def time_pair(fn_a: Callable[[], object], fn_b: Callable[[], object], repeats: int = 10,
              warmup: int = 2, device: torch.device | str | None = None) -> tuple:
    """Median seconds of ``fn_a`` and ``fn_b``, run alternately so drift hits both equally."""
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    for _ in range(warmup):
        fn_a(), fn_b()
    ta, tb = [], []
    for _ in range(repeats):
        for fn, out in ((fn_a, ta), (fn_b, tb)):
            _sync(device)
            t0 = time.perf_counter()
            fn()
            _sync(device)
            out.append(time.perf_counter() - t0)
    return statistics.median(ta), statistics.median(tb)


def time_one(fn: Callable[[], object], repeats: int = 10, warmup: int = 2,
             device: torch.device | str | None = None) -> float:
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
