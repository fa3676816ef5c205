"""Many streams joining and leaving at random on one model, for minutes: no cross-talk, no growth.

``S`` stream slots on one :class:`~tsm_apps.live.scheduler.Scheduler` (its own thread) over a
tiny online TSM; each slot, on its own thread, opens a stream, feeds it a random number of frames
of its own random video (waiting for each answer, so nothing is dropped), sometimes resets it,
then leaves, and starts again until the time is up. Every answer is checked against the same
frames stepped alone (a fresh engine, batch 1, one frame a step): bit for bit on the CPU (the
engine's exact mode; run with MKL_CBWR=AUTO,STRICT, which the script sets for itself). The
process's resident memory is read at the first minute and at the end.

    .venv/bin/python benchmarks/soak_live.py [--streams 32] [--seconds 300] [--seed 0]

The test suite runs it reduced (tests/test_tsm_apps/test_live_soak.py).
"""

from __future__ import annotations

import argparse
import random
import threading
import time
from pathlib import Path

import numpy as np
import torch

from tsm_apps import build_recognizer
from tsm_apps.data.protocol import TestProtocol
from tsm_apps.live.engine import BatchedEngine
from tsm_apps.live.recognition import RecognizerStepper
from tsm_apps.live.scheduler import Scheduler
from tsm_apps.live.stream import Frame


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def stepper() -> RecognizerStepper:
    torch.manual_seed(0)
    model = build_recognizer("mobilenetv2", 5, 8, "online", width=0.25).eval()
    return RecognizerStepper(model, TestProtocol(crop_size=48, scale_size=54), list("abcde"))


def _video(seed: int, length: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (length, 40, 56, 3), dtype=np.uint8)


class _Slot:
    """One stream slot's life: open, feed, maybe reset, leave; repeat. Keeps every answer with
    what made it (the video's seed and length, the frames since the stream's start or last
    reset), not the frames themselves, so the checker adds no memory of its own."""

    def __init__(self, k: int, sched: Scheduler, seed: int, until: float) -> None:
        self.k, self.sched, self.rng, self.until = k, sched, random.Random(seed), until
        self.checks: list = []  # ((video seed, length), first frame, last frame, the answer)
        self.streams = 0

    def run(self) -> None:
        while time.monotonic() < self.until:
            self.streams += 1
            got: list = []
            done = threading.Event()
            s = self.sched.open(f"slot{self.k}", on_result=lambda r: (got.append(r), done.set()))
            key = (self.rng.randrange(2**31), self.rng.randint(1, 12))
            video = _video(*key)
            reset_at = self.rng.choice([None, None, self.rng.randrange(len(video))])
            start = 0
            for i, image in enumerate(video):
                if i == reset_at:
                    s.reset()
                    start = i
                done.clear()
                s.submit(Frame(image, i, None, time.monotonic()), block=True)
                if not done.wait(60):
                    raise RuntimeError(f"slot {self.k}: no answer in 60 s")
                self.checks.append((key, start, i, got[-1].output))
                got.clear()
                time.sleep(self.rng.random() * 0.02)
            s.close()


def soak(streams: int, seconds: float, seed: int = 0) -> dict:
    """Run the soak (module docstring); its figures."""
    st = stepper()
    engine = BatchedEngine(st, exact=True)
    until = time.monotonic() + seconds
    with Scheduler(engine) as sched:
        slots = [_Slot(k, sched, seed * 1000 + k, until) for k in range(streams)]
        threads = [threading.Thread(target=s.run) for s in slots]
        for t in threads:
            t.start()
        time.sleep(min(60.0, seconds / 5))
        first = rss_mb()
        for t in threads:
            t.join()
        last = rss_mb()
        left = len(sched.streams)
    alone, bad, checked = BatchedEngine(st, exact=True), 0, 0
    for slot in slots:
        for (seed, length), lo, hi, answer in slot.checks:
            frames = _video(seed, length)[lo : hi + 1]
            state = alone.new_state()
            want = [alone.step([state], [st.prepare(f)])[0] for f in frames][-1]
            bad += not torch.equal(want, answer)
            checked += 1
    return {
        "streams": streams,
        "seconds": seconds,
        "lives": sum(s.streams for s in slots),
        "answers": checked,
        "mismatches": bad,
        "batches": dict(sorted(engine.stats.sizes.items())),
        "rss_first_mb": first,
        "rss_last_mb": last,
        "streams_left": left,
    }


def main() -> None:
    from tsm_apps.live.exact import request_strict_mkl

    request_strict_mkl()
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--streams", type=int, default=32)
    p.add_argument("--seconds", type=float, default=300.0)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    torch.set_num_threads(2)
    f = soak(a.streams, a.seconds, a.seed)
    print(
        f"{f['streams']} stream slots for {f['seconds']:.0f} s: {f['lives']} streams opened and "
        f"closed, {f['answers']} answers checked against each stream alone, "
        f"{f['mismatches']} differ; batch sizes stepped {f['batches']}; resident memory "
        f"{f['rss_first_mb']:.1f} MB after the first part, {f['rss_last_mb']:.1f} MB at the end "
        f"({f['rss_last_mb'] - f['rss_first_mb']:+.1f} MB); streams left open: {f['streams_left']}"
    )


if __name__ == "__main__":
    main()
