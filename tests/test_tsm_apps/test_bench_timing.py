"""tsm_apps.bench.timing: the round order, the medians and the paired ratio (a fake clock)."""

import pytest

from tsm_apps.bench import timing


def test_rounds_rotate_the_order_and_pair_times_by_round(monkeypatch):
    clock = [0.0]
    calls = []
    monkeypatch.setattr(timing.time, "perf_counter", lambda: clock[0])

    def fn(name, seconds):
        def run():
            calls.append(name)
            clock[0] += seconds

        return run

    rounds = timing.time_rounds(
        {"a": fn("a", 3.0), "b": fn("b", 2.0), "c": fn("c", 1.0)}, repeats=4, warmup=1
    )
    # warm-up in the given order, then rounds starting at a, b, c, a
    assert calls == list("abc") + list("abc") + list("bca") + list("cab") + list("abc")
    assert rounds == {"a": [3.0] * 4, "b": [2.0] * 4, "c": [1.0] * 4}
    assert timing.medians(rounds) == {"a": 3.0, "b": 2.0, "c": 1.0}
    assert timing.paired_ratio(rounds, "a", "b") == 1.5


def test_paired_ratio_is_the_median_of_per_round_ratios():
    rounds = {"a": [2.0, 9.0, 3.0], "b": [1.0, 3.0, 2.0]}  # ratios 2.0, 3.0, 1.5
    assert timing.round_ratios(rounds, "a", "b") == [2.0, 3.0, 1.5]
    assert timing.paired_ratio(rounds, "a", "b") == 2.0


def test_rounds_need_a_repeat():
    with pytest.raises(ValueError, match="repeats must be >= 1, got 0"):
        timing.time_rounds({"a": lambda: None}, repeats=0)
