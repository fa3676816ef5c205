"""``tsm bench --quick`` produces every figure of the suite (values are benchmarks, not tests)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow

# one substring per figure the issue lists; each must name exactly one measured figure
EXPECTED = ("shift overhead", "online per-frame latency: TSM/TSN", "cache",
            "I3D", "shift op", "loading", "DDP", "detection online per-frame latency",
            "detection online TSM R-FCN frames/s", "detection TSN R-FCN frames/s",
            "exact CAM")


def test_bench_quick_writes_every_figure(tmp_path):
    out = tmp_path / "bench.json"
    r = subprocess.run([sys.executable, "-m", "tsm_apps.cli", "bench", "--quick", "--device", "cpu",
                        "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    report = json.loads(out.read_text())
    names = [f["name"] for f in report["figures"]]
    for key in EXPECTED:
        hits = [n for n in names if key.lower() in n.lower()]
        assert len(hits) >= 1, f"no figure about {key!r} in {names}"
    for f in report["figures"]:
        assert f["value"] > 0 and f["device"] == "cpu"
    assert report["quick"] is True and report["machine"]["torch"]
    table = r.stdout
    assert "| figure | value | goal | met | device |" in table
