"""A model step beside busy Python threads, at two GIL switch intervals.

The app's server runs model steps (torch, which releases the GIL around every operator) beside
Python-bound threads (script runs drawing pages, the event loop sending them). Each time a step
takes the GIL back after an operator it may wait a whole switch interval behind a busy thread,
so a step of a few hundred operators slows by orders of magnitude (the "convoy effect"). This
prints the median time of a TSM ResNet-18 step (1 x 8 x 3 x 112 x 112, CPU) alone and beside 1
and 4 busy Python threads at Python's default switch interval (5 ms) and at the server's
(``ui.server.SWITCH_INTERVAL_S``), with the slowdown against the step alone.

    OMP_NUM_THREADS=2 .venv/bin/python -m benchmarks.gil_switch [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time


def _busy(stop: threading.Event) -> None:
    while not stop.is_set():
        sum(i * i for i in range(1000))


def step_ms(step, repeats: int, busy: int) -> float:
    """Median ms of ``step()`` over ``repeats`` calls while ``busy`` Python threads spin."""
    stop = threading.Event()
    threads = [threading.Thread(target=_busy, args=(stop,), daemon=True) for _ in range(busy)]
    for t in threads:
        t.start()
    try:
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            step()
            times.append(1000 * (time.perf_counter() - t0))
    finally:
        stop.set()
        for t in threads:
            t.join()
    return statistics.median(times)


def main() -> None:
    import torch

    from tsm_apps import build_recognizer
    from ui.server import SWITCH_INTERVAL_S

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    torch.manual_seed(0)
    model = build_recognizer("resnet18", num_classes=10, num_segments=8, shift="offline").eval()
    x = torch.randn(1, 8, 3, 112, 112)

    def step() -> None:
        with torch.no_grad():
            model(x)

    step()
    default = sys.getswitchinterval()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} intra-op threads")
    for interval in (0.005, SWITCH_INTERVAL_S):
        sys.setswitchinterval(interval)
        alone = step_ms(step, args.repeats, 0)
        row = [f"switch interval {1000 * interval:g} ms: step alone {alone:.1f} ms"]
        for busy in (1, 4):
            ms = step_ms(step, args.repeats, busy)
            row.append(f"beside {busy} busy {ms:.1f} ms ({ms / alone:.1f}x)")
        print(" · ".join(row))
    sys.setswitchinterval(default)


if __name__ == "__main__":
    main()
