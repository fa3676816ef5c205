"""tsm_apps.bench.live: the batched-streams figures at a tiny setting (ResNet-18 width 0.25 at
64x64, 1 and 2 streams) have their names, units, goals and details; the arithmetic of the rows
and of the 16-stream figures on given round times; the two sides it times do equal work
(batched and alone give the same logits: bit for bit in exact mode, to float rounding with the
default kernels); the exact mode's cost is measured here or, without MKL's strict mode, in a
child process that has it (tests/conftest.py sets it for this one)."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
import torch

from tsm_apps.bench import live
from tsm_apps.live.engine import BatchedEngine

TINY = live.Setting(
    archs=("resnet18",),
    streams=(1, 2),
    crop=64,
    scale=72,
    width=0.25,
    repeats=2,
    warmup=1,
    exact_archs=("resnet18",),
    exact_batches=(1, 2),
    exact_repeats=1,
)
ROW_KEYS = {
    "streams",
    "alone_fps",
    "batched_fps",
    "ratio",
    "batched_p50_ms",
    "batched_p95_ms",
    "alone_tick_ms",
    "rounds",
    "identical",
    "max_abs_diff",
    "max_rel_diff",
    "ticks",
    "load",
    "threads",
    "cuda_graphs",
}
EXACT_KEYS = {
    "default_ms_per_frame",
    "exact_ms_per_frame",
    "identical",
    "max_abs_diff",
    "max_rel_diff",
    "ticks",
    "rounds",
    "threads",
    "load",
}
EXACT_NAMES = [
    "exact batching CPU cost: exact/default step (resnet18, batch 1, 64)",
    "exact batching CPU cost: exact/default step (resnet18, batch 2, 64)",
]


def test_tiny_figures_have_their_names_units_goals_and_details():
    figs = live.live_figures(TINY, "cpu")
    assert [f.name for f in figs] == [
        "live batched/alone frames/s (resnet18, 1 stream, 64)",
        "live batched/alone frames/s (resnet18, 2 streams, 64)",
    ] + EXACT_NAMES
    assert [f.goal for f in figs] == [None, ">= 1.0", None, None]
    assert all(f.unit == "x" and f.device == "cpu" for f in figs)
    assert all(math.isfinite(f.value) and f.value > 0 for f in figs)
    json.dumps([f.to_dict() for f in figs], allow_nan=False)  # as tsm bench writes them
    one, two = figs[0].detail, figs[1].detail
    assert set(one) == ROW_KEYS | {"note"} and set(two) == ROW_KEYS
    assert figs[1].met == (figs[1].value >= 1.0) and figs[0].met is None
    for d, n in ((one, 1), (two, 2)):
        assert d["streams"] == n and d["rounds"] == 2 and d["ticks"] == 3  # 1 warm-up + 2
        assert d["max_rel_diff"] < 1e-5  # the timed work is equal (default kernels: rounding)
        assert d["identical"] is (d["max_abs_diff"] == 0.0)
        assert d["cuda_graphs"] is False and d["threads"] == torch.get_num_threads()
        for k in ("alone_fps", "batched_fps", "batched_p50_ms", "batched_p95_ms"):
            assert math.isfinite(d[k]) and d[k] > 0, k
        assert d["batched_p95_ms"] >= d["batched_p50_ms"]
    for f in figs[2:]:
        assert set(f.detail) == EXACT_KEYS and f.met is None and f.detail["ticks"] == 2
        assert all(f.detail[f"{m}_ms_per_frame"] > 0 for m in live.MODES)
        assert f.detail["max_rel_diff"] < 1e-5  # exact and default differ by rounding only


def test_in_exact_mode_batched_and_alone_are_identical_in_every_timed_tick():
    figs = live.live_figures(dataclasses.replace(TINY, exact=True, exact_archs=()), "cpu")
    assert [f.name for f in figs] == [
        "live batched/alone frames/s (resnet18, 1 stream, 64, exact)",
        "live batched/alone frames/s (resnet18, 2 streams, 64, exact)",
    ]
    for f in figs:
        assert f.detail["identical"] is True and f.detail["max_abs_diff"] == 0.0
        assert f.detail["ticks"] == 3 and f.met == (None if f.goal is None else f.value >= 1.0)


def test_without_mkls_strict_mode_the_exact_cost_runs_in_a_child_process_that_has_it():
    figs = live._in_child("resnet18", TINY)  # what exact_figures runs when check_exact fails
    assert [f.name for f in figs] == EXACT_NAMES
    assert all(set(f.detail) == EXACT_KEYS and f.value > 0 for f in figs)
    assert figs[0].detail["threads"] == torch.get_num_threads()


def test_rows_and_the_sixteen_stream_figures_from_given_round_times():
    rounds = {  # seconds a tick; powers of two keep the ratios exact
        "batched_1": [0.25, 0.5, 0.5],
        "alone_1": [0.5, 0.5, 0.25],
        "batched_16": [1.0, 1.0, 2.0],
        "alone_16": [8.0, 4.0, 4.0],
    }
    rows = {n: live.row(rounds, n) for n in (1, 16)}
    assert rows[1]["ratio"] == 1.0  # median of 2, 1, 0.5
    assert rows[16]["ratio"] == 4.0  # median of 8, 4, 2
    assert rows[16]["batched_fps"] == 16.0 and rows[16]["alone_fps"] == 4.0
    assert rows[16]["alone_tick_ms"] == 4000.0 and rows[16]["batched_p50_ms"] == 1000.0
    assert rows[16]["batched_p95_ms"] == pytest.approx(1900.0)  # linear between 1 and 2 s
    assert rows[1]["batched_p95_ms"] == pytest.approx(500.0)
    result = {
        "arch": "a",
        "crop": 64,
        "exact": False,
        "rounds": rounds,
        "rows": rows,
        "load": [0.5, 0.5],
        "threads": 2,
        "cuda_graphs": True,
    }
    cuda = live.stream_figures(result, "cuda")
    assert [(f.name, f.goal, f.met) for f in cuda] == [
        ("live batched/alone frames/s (a, 1 stream, 64)", None, None),
        ("live batched/alone frames/s (a, 16 streams, 64)", None, None),
        ("live 16 streams / 1 stream frames/s (a, batched, 64)", ">= 8", False),
        ("live p95 step latency 16 streams / 1 stream (a, batched, 64)", "<= 3", False),
    ]
    assert cuda[2].value == 4.0  # 16 x median(0.25/1, 0.5/1, 0.5/2)
    assert cuda[3].value == pytest.approx(3.8)
    cpu = live.stream_figures(result, "cpu")
    assert [(f.goal, f.met) for f in cpu] == [(None, None), (">= 1.0", True)] + [(None, None)] * 2


@pytest.mark.parametrize("exact", [True, False])
def test_batched_and_alone_give_the_same_logits_for_the_same_frames(exact):
    stepper = live.build_stepper("resnet18", TINY, "cpu")
    engine = BatchedEngine(stepper, exact=exact)
    bank = live.frame_bank(stepper, 3, TINY.scale)
    batched = live.Side(engine, bank, 3, batched=True)
    alone = live.Side(engine, bank, 3, batched=False)
    for _ in range(4):
        batched()
        alone()
    assert engine.stats.sizes == {3: 4, 1: 12}  # one batch of 3 a tick against 3 steps of 1
    agree = live.compare(batched, alone)
    if exact:
        assert agree == {"identical": True, "max_abs_diff": 0.0, "max_rel_diff": 0.0, "ticks": 4}
    else:  # the default kernels pick their arithmetic by batch size: float rounding
        assert agree["ticks"] == 4 and agree["max_rel_diff"] < 1e-5
        for tb, ta in zip(batched.outputs, alone.outputs):
            assert all(torch.allclose(x, y, rtol=1e-4, atol=1e-6) for x, y in zip(tb, ta))
    # not a vacuous equality: streams differ within a tick, and the shift carries the past
    first = batched.outputs[0]
    assert not torch.equal(first[0], first[1]) and not torch.equal(first[1], first[2])
    assert batched.outputs[3][0].shape == (live.CLASSES,)
    # stream 0 sees bank[0] at ticks 0 and 3: the same frame, after other frames the second time
    assert not torch.equal(batched.outputs[3][0], batched.outputs[0][0])
    assert all(b is not None for s in batched.states for b in s.buffers)


def test_sides_that_stepped_different_ticks_are_not_compared():
    stepper = live.build_stepper("resnet18", TINY, "cpu")
    engine = BatchedEngine(stepper)
    bank = live.frame_bank(stepper, 1, TINY.scale)
    a, b = live.Side(engine, bank, 1, True), live.Side(engine, bank, 1, False)
    a()
    with pytest.raises(ValueError, match="sides stepped 1 and 0 ticks"):
        live.compare(a, b)


def test_quick_mode_picks_the_small_setting_per_device(monkeypatch):
    seen = []
    monkeypatch.setattr(live, "live_figures", lambda s, d: seen.append((s, d)) or [])
    live.figures(True, "cpu")
    live.figures(True, "cuda")
    live.figures(False, "cpu")
    assert seen == [(live.QUICK_CPU, "cpu"), (live.QUICK_CUDA, "cuda"), (live.FULL, "cpu")]
    assert live.QUICK_CPU.archs == ("mobilenetv2",) and live.QUICK_CPU.streams == (1, 4)
    assert live.QUICK_CPU.exact_archs == ("mobilenetv2",) and live.QUICK_CUDA.exact_archs == ()
    assert live.FULL.streams == (1, 4, 8, 16) and live.FULL.archs == live.ARCHS
    assert 16 in live.QUICK_CUDA.streams and 1 in live.QUICK_CUDA.streams
