"""The soak of benchmarks/soak_live.py, reduced: 32 streams joining, leaving and resetting at
random for a few seconds on one scheduler; every answer equals the same frames stepped alone (no
cross-talk), and no stream is left behind."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))


def test_32_streams_joining_and_leaving_never_cross_talk():
    from soak_live import soak

    f = soak(streams=32, seconds=6.0)
    assert f["lives"] > 32 and f["answers"] > 100
    assert f["mismatches"] == 0
    assert max(f["batches"]) == 4  # many streams stepped together, four at most on a CPU
    assert f["streams_left"] == 0
