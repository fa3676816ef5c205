"""TSM/TSN latency ratios with many rounds and a confidence interval (the goals' figures).

    .venv/bin/python benchmarks/bench_shift_ratio.py [--rounds 80] [--online-factor 5]

``tsm bench`` times each figure over 20 rounds (60 online), which moves by a few percent between
runs on a 2-core machine; the goals (offline <= 1.03, online <= 1.02) are closer than that.
This script times only the two pairs, ResNet-50 in the default layout (channels-last), autograd
off: one 8x224 clip through TSM and TSN (``--rounds`` rounds), one 224 frame through the online
TSM (``OnlineRecognizer``) and TSN's per-frame forward (``--online-factor`` times as many
rounds). Each round runs both models (starting with the other one every round); the figure is
the median of the per-round ratios with a 95% bootstrap interval (2,000 resamples, seed 0).
Prints the load average before and after each pair (the machine may be shared).
"""

from __future__ import annotations

import argparse
import random
import statistics

import torch

from tsm_apps.bench.core import clip_pair, frame_pair
from tsm_apps.bench.timing import load_average, medians, paired_ratio, round_ratios, time_rounds


def median_interval(values: list, resamples: int = 2000, seed: int = 0) -> tuple:
    """``(low, high)``: the 95% percentile-bootstrap interval of the median of ``values``."""
    rng = random.Random(seed)
    boot = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(resamples))
    return boot[int(0.025 * resamples)], boot[int(0.975 * resamples) - 1]


def report(name: str, rounds: dict, goal: float, load: float) -> None:
    lo, hi = median_interval(round_ratios(rounds, "tsm", "tsn"))
    ms = {k: v * 1e3 for k, v in medians(rounds).items()}
    print(
        f"{name}: TSM/TSN {paired_ratio(rounds, 'tsm', 'tsn'):.4f} (95% CI {lo:.4f}-{hi:.4f}, "
        f"goal <= {goal}) over {len(rounds['tsm'])} rounds; medians TSM {ms['tsm']:.2f} ms, "
        f"TSN {ms['tsn']:.2f} ms; load {load:.2f} -> {load_average():.2f}",
        flush=True,
    )


@torch.no_grad()
def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=80)
    p.add_argument("--online-factor", type=int, default=5)
    a = p.parse_args()
    print(f"threads {torch.get_num_threads()}")
    fns = clip_pair()
    load = load_average()
    report("offline, R-50 8x224 clip", time_rounds(fns, a.rounds, 2), 1.03, load)
    with frame_pair() as fns:
        load = load_average()
        rounds = time_rounds(fns, a.online_factor * a.rounds, 2)
    report("online, R-50 224 frame", rounds, 1.02, load)


if __name__ == "__main__":
    main()
