"""Run state that a resume must restore exactly: RNG states, and the SIGTERM request to stop.

RNG states are stored as tensors and plain lists so checkpoints load with
``torch.load(weights_only=True)`` (numpy's state array becomes a list of ints).
"""

from __future__ import annotations

import random
import signal
from contextlib import contextmanager
from typing import Iterator

import numpy as np
import torch


def rng_state() -> dict:
    """torch (CPU and every CUDA device), numpy and Python ``random`` states."""
    name, keys, pos, has_gauss, gauss = np.random.get_state()
    version, internal, gauss_next = random.getstate()
    return {
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
        "numpy": [name, keys.tolist(), int(pos), int(has_gauss), float(gauss)],
        "python": [version, list(internal), gauss_next],
    }


def set_rng_state(state: dict) -> None:
    """Inverse of :func:`rng_state`."""
    torch.set_rng_state(state["torch"])
    if state["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
    name, keys, pos, has_gauss, gauss = state["numpy"]
    np.random.set_state((name, np.asarray(keys, dtype=np.uint32), pos, has_gauss, gauss))
    version, internal, gauss_next = state["python"]
    random.setstate((version, tuple(internal), gauss_next))


class StopFlag:
    """Set by SIGTERM; the training loop checks it after each step, saves and stops."""

    def __init__(self) -> None:
        self.requested = False
        self.signum = 0

    def __call__(self, signum: int, frame: object) -> None:
        self.requested, self.signum = True, signum


@contextmanager
def stop_on_sigterm() -> Iterator[StopFlag]:
    """Install a SIGTERM handler for the duration (main thread only); the old one is restored."""
    flag = StopFlag()
    try:
        old = signal.signal(signal.SIGTERM, flag)
    except ValueError:  # not the main thread: no handler, the flag never fires
        yield flag
        return
    try:
        yield flag
    finally:
        signal.signal(signal.SIGTERM, old)
