"""The live stream's status: the rate is the rate while playing (wall clock between the frames
shown), unchanged while paused or stepped; TSN's cache line says nothing is carried."""

from __future__ import annotations

import pytest

from ui.app.widgets import stream as live
from ui.app.widgets.stream import Stream, cache_text, status


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    c = Clock()
    monkeypatch.setattr(live.time, "perf_counter", c)
    return c


def _stream(clock: Clock, model_s: float = 0.02) -> Stream:
    def step(t: int) -> int:
        clock.now += model_s  # the models' time
        return t

    return Stream(("k",), 100, step)


def test_rate_is_measured_while_playing_only(clock):
    s = _stream(clock)
    s.advance()  # a Step before playing: no rate yet
    assert s.rate() is None and status(s).endswith("· not played yet")
    assert Stream(("k",), 3, lambda t: t).model_ms() is None  # nothing computed yet
    live._play(s)
    for _ in range(5):
        s.advance()
        clock.now += 0.08  # drawing and the page's round trip: 0.1 s per frame in all
    assert s.rate() == pytest.approx(10.0)
    live._pause(s)
    clock.now += 30.0  # paused for half a minute
    assert s.rate() == pytest.approx(10.0)
    live._step(s)  # a Step while paused does not count
    assert s.rate() == pytest.approx(10.0)
    assert status(s) == (
        "paused: frame 6/99 · last frame 20 ms · model median 20 ms · 10.0 frames/s while playing"
    )
    live._play(s)  # a new run of Play: measured afresh, the pause left out
    for _ in range(3):
        s.advance()
        clock.now += 0.23
    assert s.rate() == pytest.approx(4.0)
    assert status(s, "x").startswith(
        "playing: frame 9/99 · last frame 20 ms · model median 20 ms · 4.0 frames/s"
    )


def test_cache_lines():
    assert cache_text(None) == "no shift cache (no temporal shift: nothing carried between frames)"
    assert cache_text(1536) == "shift cache 1.5 kB"
    assert cache_text(3 * 2**20) == "shift cache 3.00 MB"


def test_model_time_is_the_median_of_the_models_alone(clock):
    """The status line's model time: the median of ``step``'s own times (drawing left out)."""
    times = iter([0.030, 0.010, 0.500, 0.020, 0.040])

    def step(t: int) -> int:
        clock.now += next(times)
        return t

    s = Stream(("k",), 10, step)
    live._play(s)
    for _ in range(5):
        s.advance()
        clock.now += 1.0  # drawing: not the models' time
    assert s.model_ms() == pytest.approx(30.0)
    assert " · last frame 40 ms · model median 30 ms · " in status(s)


def test_two_runs_stepping_one_stream_take_turns():
    """After a click Streamlit's fast reruns start the page's next run while the stopped one may
    still be inside a model step: both call ``advance`` on the session's stream. The steps must
    not overlap (they share the models' shift buffers) and every frame is computed once, in
    order."""
    import threading
    import time as real_time

    inside, overlaps, frames = [0], [], []

    def step(t: int) -> int:
        inside[0] += 1
        overlaps.append(inside[0])
        real_time.sleep(0.002)
        frames.append(t)
        inside[0] -= 1
        return t

    s = Stream(("k",), 40, step)
    runs = [threading.Thread(target=lambda: [s.advance() for _ in range(30)]) for _ in range(2)]
    for r in runs:
        r.start()
    for r in runs:
        r.join()
    assert max(overlaps) == 1
    assert frames == list(range(40)) and s.t == 39


def test_playing_computes_the_next_frame_while_the_current_one_is_shown():
    """``play``: every frame computed is shown once, in order, each snapshot's result that of
    its own frame although the stream has moved on; frame t+1's step starts before frame t's
    drawing ends (checked by events: without the overlap the wait below times out); the last
    frame is shown and the stream stops there."""
    import threading

    started = [threading.Event() for _ in range(7)]

    def step(t: int) -> str:
        started[t].set()
        return f"result {t}"

    s = Stream(("k",), 6, step)
    shown, overlapped = [], []

    def show(shot: Stream) -> None:
        shown.append((shot.t, shot.last, len(shot.latency_ms)))
        overlapped.append(started[shot.t + 1].wait(timeout=30) if shot.t < 5 else True)

    live._play(s)
    live.play(s, show)
    assert shown == [(t, f"result {t}", t + 1) for t in range(6)]
    assert all(overlapped) and s.t == 5 and s.done and not started[6].is_set()


def test_a_step_error_stops_playing_at_the_last_good_frame():
    """An error in the frame computed ahead is raised by ``play`` once the frame before it is
    shown; the stream stays at that frame."""

    def step(t: int) -> int:
        if t == 3:
            raise RuntimeError("batch dim 1")
        return t

    s, shown = Stream(("k",), 10, step), []
    live._play(s)
    with pytest.raises(RuntimeError, match="batch dim 1"):
        live.play(s, lambda shot: shown.append(shot.t))
    assert shown == [0, 1, 2] and s.t == 2


def test_every_step_runs_on_the_one_live_thread():
    """The first frame of a Play, the frames computed ahead and a Step all run on the server's
    one live-step thread, never on the page's own thread: model steps of different sessions
    never run side by side."""
    import threading

    threads = []

    def step(t: int) -> int:
        threads.append(threading.current_thread().name)
        return t

    s = Stream(("k",), 4, step)
    live._step(s)
    live._play(s)
    live.play(s, lambda shot: None)
    assert s.t == 3 and len(threads) == 4
    assert all(n.startswith("live-step") for n in threads), threads
    assert len(set(threads)) == 1
