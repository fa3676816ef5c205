"""Many streams, one model: the batched online step gives every stream what the stream gets
stepped alone (bit for bit in the exact mode, to float rounding by default), while streams join,
leave, reset and change size; a stream whose frame cannot be used fails alone; the mailbox keeps
only the newest frame."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

from tsm_apps import build_recognizer
from tsm_apps.data.protocol import TestProtocol
from tsm_apps.live.engine import BatchedEngine
from tsm_apps.live.recognition import RecognizerStepper
from tsm_apps.live.scheduler import Scheduler
from tsm_apps.live.stream import Frame

NAMES = [f"c{i}" for i in range(7)]


def _stepper(arch="resnet18", shift="online", view="crop"):
    torch.manual_seed(0)
    m = build_recognizer(arch, 7, 8, shift, width=0.25).eval()
    return RecognizerStepper(m, TestProtocol(crop_size=64, scale_size=72, view=view), NAMES)


def _video(seed, t=6, h=90, w=120):
    return np.random.default_rng(seed).integers(0, 256, (t, h, w, 3), dtype=np.uint8)


def _alone(stepper, frames, exact=True):
    """The stream stepped by itself: one frame a step, batch 1."""
    engine = BatchedEngine(stepper, exact=exact)
    state = engine.new_state()
    return [engine.step([state], [stepper.prepare(f)])[0] for f in frames]


def _frame(image, i):
    return Frame(image, i, i / 25, 0.0)


@pytest.mark.parametrize("arch", ["resnet18", "mobilenetv2"])
def test_streams_joining_leaving_and_resetting_get_what_they_get_alone(arch):
    """Four streams on one scheduler: A from tick 0, B joins at tick 1, C at tick 2 and leaves
    after tick 3, A resets before tick 4, D joins at tick 4; each tick steps every stream with a
    frame in ONE batch (checked), and every result equals the stream stepped alone."""
    st = _stepper(arch)
    videos = {k: _video(i) for i, k in enumerate("ABCD")}
    sched = Scheduler(BatchedEngine(st, exact=True))
    got = {k: [] for k in videos}
    streams, sent = {}, {k: [] for k in videos}
    plan = {0: "A", 1: "AB", 2: "ABC", 3: "ABC", 4: "ABD", 5: "ABD"}
    batches = []
    for tick, names in plan.items():
        for k in names:
            if k not in streams:
                streams[k] = sched.open(k, on_result=lambda r, k=k: got[k].append(r))
        if tick == 4:
            streams["A"].reset()
            sent["A"].append("reset")
        if tick == 4 and "C" in streams:
            streams.pop("C").close()
        for k in names:
            image = videos[k][len([x for x in sent[k] if not isinstance(x, str)])]
            streams[k].submit(_frame(image, tick))
            sent[k].append(image)
        assert sched.tick() == len(names)
        batches.append(sched.engine.stats.batch)
    assert batches == [1, 2, 3, 3, 3, 3]
    for k, seq in sent.items():
        pieces, cur = [], []
        for x in seq:  # a reset starts the stream afresh: compare each piece with a fresh stream
            if isinstance(x, str):
                pieces.append(cur)
                cur = []
            else:
                cur.append(x)
        pieces.append(cur)
        want = [o for piece in pieces for o in _alone(st, piece)]
        assert len(got[k]) == len(want) > 0
        for r, w in zip(got[k], want):
            assert torch.equal(r.output, w), (k, r.frame.index)


def test_a_reset_changes_the_answer_and_tsn_carries_nothing():
    st = _stepper()
    frames = _video(1, t=3)
    carried = _alone(st, frames)
    fresh = _alone(st, frames[2:])
    assert not torch.equal(carried[2], fresh[0])  # TSM: frame 2 depends on frames 0-1
    tsn = _stepper(shift=None)
    assert tsn.modules == [] and BatchedEngine(tsn).new_state().buffers == []
    assert torch.equal(_alone(tsn, frames)[2], _alone(tsn, frames[2:])[0])


def test_frames_of_other_sizes_step_in_their_own_group_and_a_size_change_resets():
    st = _stepper(view="frame")  # the whole frame: the input size follows the frame's
    small, big = _video(2, h=72, w=96), _video(3, h=72, w=120)
    sched = Scheduler(BatchedEngine(st, exact=True))
    got = {"s": [], "b": []}
    s = sched.open("s", on_result=lambda r: got["s"].append(r))
    b = sched.open("b", on_result=lambda r: got["b"].append(r))
    for t in range(3):
        s.submit(_frame(small[t], t))
        b.submit(_frame(big[t], t))
        assert sched.tick() == 2
        assert sched.engine.stats.batch == 1  # two groups of one
    for k, v in (("s", small), ("b", big)):
        assert all(torch.equal(r.output, w) for r, w in zip(got[k], _alone(st, v[:3])))
    # stream s now sends the big frames: a cut-over, from zeros, in b's group
    s.submit(_frame(big[3], 3))
    b.submit(_frame(big[3], 3))
    assert sched.tick() == 2 and sched.engine.stats.batch == 2
    assert torch.equal(got["s"][-1].output, _alone(st, big[3:4])[0])
    assert torch.equal(got["b"][-1].output, _alone(st, big[:4])[3])


def test_a_bad_frame_fails_its_stream_with_one_line_and_the_others_go_on():
    st = _stepper()
    sched = Scheduler(BatchedEngine(st))
    errors, got = [], []
    bad = sched.open("cam-2", on_error=errors.append)
    good = sched.open("cam-1", on_result=got.append)
    frames = _video(4, t=2)
    bad.submit(_frame(frames[0].astype(np.float32), 0))
    good.submit(_frame(frames[0], 0))
    assert sched.tick() == 1
    assert len(errors) == 1 and errors[0].startswith("cam-2: frame 0 cannot be used")
    assert "uint8 (H, W, 3)" in errors[0] and "\n" not in errors[0]
    assert not bad.submit(_frame(frames[1], 1))  # a failed stream takes no more frames
    good.submit(_frame(frames[1], 1))
    assert sched.tick() == 1 and len(got) == 2 and [s.name for s in sched.streams] == ["cam-1"]


def test_the_mailbox_keeps_the_newest_frame_and_counts_the_dropped_ones():
    st = _stepper()
    sched = Scheduler(BatchedEngine(st, exact=True))
    got = []
    s = sched.open("cam", on_result=got.append)
    frames = _video(5, t=4)
    for i in range(4):  # a source four frames ahead of the model
        s.submit(_frame(frames[i], i))
    assert sched.tick() == 1
    assert s.dropped == 3 and s.received == 4 and got[0].frame.index == 3 and got[0].dropped == 3
    assert torch.equal(got[0].output, _alone(st, frames[3:])[0])
    # a file waits instead: the second submit blocks until the model took the first
    s.submit(_frame(frames[0], 0), block=True)
    done = threading.Event()
    threading.Thread(
        target=lambda: (s.submit(_frame(frames[1], 1), block=True), done.set())
    ).start()
    assert not done.wait(0.2)
    sched.tick()
    assert done.wait(5) and s.dropped == 3
    sched.tick()
    assert [r.frame.index for r in got] == [3, 0, 1]


def test_the_scheduler_thread_steps_what_arrives_and_closed_streams_are_forgotten():
    st = _stepper()
    frames = _video(6, t=5)
    got = []
    with Scheduler(BatchedEngine(st, exact=True)) as sched:
        s = sched.open("file", on_result=got.append)
        for i, f in enumerate(frames):
            assert s.submit(_frame(f, i), block=True, timeout=30)
        s.end()
        assert s.wait_done(timeout=30)
        s.close()
        assert sched.streams == []
    want = _alone(st, frames)
    assert len(got) == 5 and all(torch.equal(r.output, w) for r, w in zip(got, want))
    assert all(r.latency_ms >= 0 and r.model_ms > 0 for r in got)


def test_the_default_mode_batches_to_float_rounding_and_exact_mode_changes_nothing_else():
    """Without ``exact`` the CPU keeps its fast kernels: batched rows equal the rows alone up
    to float rounding; the exact mode's answers are the default's up to rounding too."""
    st = _stepper()
    videos = [_video(i, t=3) for i in range(3)]
    fast = BatchedEngine(st)
    states = [fast.new_state() for _ in videos]
    batched = [fast.step(states, [st.prepare(v[t]) for v in videos]) for t in range(3)]
    for i, v in enumerate(videos):
        for t, (fast_alone, exact_alone) in enumerate(zip(_alone(st, v, False), _alone(st, v))):
            scale = fast_alone.abs().max()
            assert (batched[t][i] - fast_alone).abs().max() <= 1e-5 * scale
            assert (exact_alone - fast_alone).abs().max() <= 1e-5 * scale


def test_strict_mkl_is_asked_for_unless_the_environment_says_otherwise(monkeypatch):
    from tsm_apps.live.exact import request_strict_mkl

    monkeypatch.delenv("MKL_CBWR", raising=False)
    request_strict_mkl()
    import os

    assert os.environ["MKL_CBWR"] == "AUTO,STRICT"
    monkeypatch.setenv("MKL_CBWR", "COMPATIBLE")
    request_strict_mkl()
    assert os.environ["MKL_CBWR"] == "COMPATIBLE"


def test_a_scheduler_nobody_streams_through_rests_and_wakes_for_the_next_stream():
    st = _stepper()
    frames = _video(7, t=2)
    got = []
    sched = Scheduler(BatchedEngine(st), rest_after=0.3).start()
    try:
        s = sched.open("first", on_result=got.append)
        s.submit(_frame(frames[0], 0))
        assert _until(lambda: len(got) == 1)
        s.close()
        assert _until(lambda: sched._thread is None)  # no thread while nobody streams
        s = sched.open("second", on_result=got.append)
        s.submit(_frame(frames[1], 0))
        assert _until(lambda: len(got) == 2) and sched._thread is not None
        assert torch.equal(got[1].output, _alone(st, frames[1:], exact=False)[0])
    finally:
        sched.close()
    assert sched._thread is None


def _until(cond, timeout=30.0):
    import time

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return False


class _Faulty:
    """A plug-in stepper with a fault: its ``finish`` raises KeyError (not a bad frame) on the
    first ``faults`` steps, then works as the stepper it wraps."""

    def __init__(self, inner, faults=1):
        self.inner, self.faults = inner, faults
        self.model, self.modules, self.device = inner.model, inner.modules, inner.device

    def prepare(self, frame):
        return self.inner.prepare(frame)

    def forward(self, batch):
        return self.inner.forward(batch)

    def finish(self, outputs, prepared):
        if self.faults:
            self.faults -= 1
            raise KeyError("class 7")
        return self.inner.finish(outputs, prepared)


def test_a_fault_in_a_step_fails_its_streams_with_one_line_and_the_thread_goes_on(caplog):
    """Anything a step raises (here a plug-in's KeyError) fails that step's streams with one
    line naming the error; the traceback goes to the log; the scheduler's thread keeps serving
    the streams that open next (it used to die, leaving them waiting for ever)."""
    st = _stepper()
    frames = _video(6, t=2)
    with Scheduler(BatchedEngine(_Faulty(st), exact=True)) as sched:
        errors, got, done = [], [], threading.Event()
        a = sched.open("cam-a", on_error=lambda e: (errors.append(e), done.set()))
        a.submit(_frame(frames[0], 0))
        assert done.wait(10)
        assert errors == ["cam-a: the model failed on this stream's frame: KeyError: 'class 7'"]
        answered = threading.Event()
        b = sched.open("cam-b", on_result=lambda r: (got.append(r), answered.set()))
        b.submit(_frame(frames[1], 1))
        assert answered.wait(10), "the scheduler's thread died"
    assert torch.equal(got[0].output, _alone(st, frames[1:])[0])
    assert any("KeyError" in r.getMessage() and r.exc_info for r in caplog.records)
