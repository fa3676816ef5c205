"""``tsm bench --quick`` produces every figure of the suite, each once (values are benchmarks,
not tests)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# the start of each figure's name: every key names exactly one figure and every figure has a
# key, so a figure that disappears, appears twice or is added without a key fails the test.
# (Substrings did not: "online per-frame latency: TSM/TSN" is also inside the detection
# figure's name, "cache" names both online caches, "DDP" the scaling model too, "exact CAM"
# three dissection figures.)
EXPECTED = (
    "shift overhead: TSM/TSN latency",
    "shift vs official op:",
    "online per-frame latency: TSM/TSN",
    "online shift cache (resnet50,",
    "online shift cache (mobilenetv2,",
    "TSM vs native I3D throughput",
    "shift op fwd+bwd:",
    "DDP scaling efficiency",
    "scaling model: predicted / measured 2-process DDP step",
    "data loading: training loader",
    "detection online per-frame latency: TSM/TSN",
    "detection online TSM R-FCN frames/s",
    "detection TSN R-FCN frames/s",
    "detection training step: TSM/TSN R-FCN",
    "dissect exact CAM / plain forward",
    "dissection clips/s per process, exact CAM",
    "dissection clips/s per process, Grad-CAM",
    "dissection 2-process efficiency, exact CAM",
    "dissection 2-process efficiency, Grad-CAM",
    "live batched/alone frames/s (mobilenetv2, 1 stream,",
    "live batched/alone frames/s (mobilenetv2, 4 streams,",
    "exact batching CPU cost: exact/default step (mobilenetv2, batch 1,",
    "exact batching CPU cost: exact/default step (mobilenetv2, batch 4,",
)


def key_problems(names: list) -> list:
    """What breaks "one figure per key, one key per figure" in ``names``."""
    out = []
    for key in EXPECTED:
        hits = [n for n in names if n.startswith(key)]
        if len(hits) != 1:
            out.append(f"{key!r} starts {len(hits)} figure names: {hits}")
    out += [f"no key for {n!r}" for n in names if not any(n.startswith(k) for k in EXPECTED)]
    return out


def test_the_keys_catch_a_missing_a_duplicated_and_an_unknown_figure():
    names = [k + " (setting)" for k in EXPECTED]
    assert key_problems(names) == []
    assert key_problems(names + [names[4]]) == [
        f"'online shift cache (mobilenetv2,' starts 2 figure names: {[names[4]] * 2}"
    ]
    assert key_problems(names[1:]) == [
        "'shift overhead: TSM/TSN latency' starts 0 figure names: []"
    ]
    assert key_problems(names + ["new figure"]) == ["no key for 'new figure'"]


@pytest.mark.slow
def test_bench_quick_writes_every_figure_once(tmp_path):
    out = tmp_path / "bench.json"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "tsm_apps.cli",
            "bench",
            "--quick",
            "--device",
            "cpu",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    report = json.loads(out.read_text())
    names = [f["name"] for f in report["figures"]]
    assert key_problems(names) == [], names
    for f in report["figures"]:
        assert f["value"] > 0 and f["device"] == "cpu"
    assert report["quick"] is True and report["machine"]["torch"]
    table = r.stdout
    assert "| figure | value | goal | met | device |" in table
