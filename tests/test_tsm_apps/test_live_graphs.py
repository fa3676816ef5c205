"""CUDA-graph capture, checked on a CPU with a recording stand-in for ``torch.cuda``.

:class:`RecordingCuda` behaves the way a real CUDA graph does in the three ways that gave wrong
answers silently: a graph captured on another device than its tensors' records work that never
touches them (every replay returns the first call's outputs); a graph captured under autocast
with the cast cache on reads cached half-precision weights that live only until the caller's
autocast block ends, which the graph cannot know (its replays read garbage: NaN here, from the
first replay on); a graph replays the kernels it captured, whatever autocast state the caller is
in now. Replays re-run the captured function on the static
inputs and write the static outputs in place, as a graph writes the same memory, so state held
anywhere but in the captured tensors (shift buffers on shared modules) shows up as cross-talk.
It also counts captures running at once (``torch.cuda.graph`` is one per process).
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager

import numpy as np
import pytest
import torch

from tsm_apps import build_recognizer
from tsm_apps.data.protocol import TestProtocol
from tsm_apps.live.engine import BatchedEngine
from tsm_apps.live.recognition import RecognizerStepper
from tsm_apps.models.cuda_graph import CapturedCall, CudaBackend, GraphedForward, autocast_state
from tsm_apps.models.online import OnlineRecognizer


class _Graph:
    def __init__(self, fn, inputs, outputs, on_home, autocast, cache):
        self.fn, self.inputs, self.outputs = fn, inputs, outputs
        self.on_home, self.autocast, self.cache = on_home, autocast, cache


def _tensors(out):
    return [out] if isinstance(out, torch.Tensor) else [t for o in out for t in _tensors(o)]


class RecordingCuda(CudaBackend):
    """CPU tensors stand for tensors on ``home`` (default cuda:1); the current device starts
    at cuda:0, as in a fresh process."""

    def __init__(self, home: str = "cuda:1") -> None:
        self.home, self.current = torch.device(home), torch.device("cuda:0")
        self.active = self.most = self.captures = 0
        self.lock = threading.Lock()

    def on_device(self, x):
        return x.device.type == "cpu"

    @contextmanager
    def device(self, device):
        before, self.current = self.current, self.home if device.type == "cpu" else device
        try:
            yield
        finally:
            self.current = before

    def capture(self, fn, inputs, warmup):
        with self.lock:
            self.active += 1
            self.most = max(self.most, self.active)
        time.sleep(0.05)  # long enough for a second thread to start capturing too
        for _ in range(warmup):
            fn(*inputs)
        outputs = fn(*inputs)
        graph = _Graph(
            fn,
            inputs,
            outputs,
            self.current == self.home,
            autocast_state("cpu"),
            torch.is_autocast_cache_enabled(),
        )
        with self.lock:
            self.active -= 1
            self.captures += 1
        return graph, outputs

    def replay(self, g):
        if not g.on_home:
            return  # the captured work ran elsewhere: the outputs keep the first call's values
        if g.autocast[0] and g.cache:
            for t in _tensors(g.outputs):
                t.fill_(float("nan"))  # it read casts cached by the caller's block
            return
        with torch.autocast("cpu", dtype=g.autocast[1] or torch.bfloat16, enabled=g.autocast[0]):
            new = g.fn(*g.inputs)
        for t, n in zip(_tensors(g.outputs), _tensors(new)):
            t.copy_(n)


def _model():
    torch.manual_seed(0)
    return build_recognizer("resnet18", 7, 8, "online", width=0.25).eval()


def _frames(n=4, seed=0):
    return torch.randn(n, 1, 3, 48, 48, generator=torch.Generator().manual_seed(seed))


def _eager(model, frames):
    with OnlineRecognizer(model, mode="eager") as rec:
        return [rec.step(f) for f in frames]


def test_the_graph_is_captured_on_the_models_device():
    """Fails with the capture outside ``backend.device(...)``: the later replays return the
    first frame's logits."""
    m, frames = _model(), _frames()
    cuda = RecordingCuda()
    with OnlineRecognizer(m, mode="graph", backend=cuda) as rec:
        got = [rec.step(f) for f in frames]
    assert cuda.captures == 1
    assert all(torch.equal(a, b) for a, b in zip(got, _eager(m, frames)))
    assert not torch.equal(got[0], got[3])


def test_a_graph_captured_under_autocast_survives_the_block_and_is_keyed_on_it():
    """Autocast's cast cache is off while capturing (else the replay after the block reads
    freed casts: NaN here), and a graph is never replayed under another autocast state."""
    m, x = _model(), torch.randn(2, 8, 3, 32, 32)
    cuda = RecordingCuda()
    g = GraphedForward(m, backend=cuda)
    with torch.no_grad():
        with torch.autocast("cpu", dtype=torch.bfloat16):
            want_bf16 = m(x)
            first = g(x)
        second = g(x)  # outside the block: a new graph, fp32
        want_fp32 = m(x)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            third = g(x)  # the bf16 graph again, after its block ended once
    assert cuda.captures == 2
    assert torch.equal(first, want_bf16) and torch.equal(third, want_bf16)
    assert torch.equal(second, want_fp32) and not torch.equal(second, want_bf16)
    call = next(iter(g._calls.values()))
    with pytest.raises(ValueError, match="autocast"):
        call(x)  # a captured call refuses a caller in another autocast state


def test_two_recognizers_on_one_model_keep_their_own_buffers():
    m = _model()
    a, b = _frames(4, seed=1), _frames(4, seed=2)
    cuda = RecordingCuda()
    ra = OnlineRecognizer(m, mode="graph", backend=cuda)
    rb = OnlineRecognizer(m, mode="graph", backend=cuda)
    got_a, got_b = [], []
    for fa, fb in zip(a, b):  # interleaved, as two viewers of one model
        got_a.append(ra.step(fa))
        got_b.append(rb.step(fb))
    ra.close()
    got_b.append(rb.step(b[0]))  # the other goes on after one closed
    assert all(torch.equal(x, y) for x, y in zip(got_a, _eager(m, a)))
    assert all(
        torch.equal(x, y)
        for x, y in zip(got_b, _eager(m, b) + [_eager(m, torch.cat([b, b[:1]]))[4]])
    )


def test_captures_on_several_threads_run_one_at_a_time():
    cuda = RecordingCuda()
    m = _model()
    x = torch.randn(1, 8, 3, 32, 32)
    calls = []

    def capture():
        calls.append(CapturedCall(m, [x], backend=cuda))

    threads = [threading.Thread(target=capture) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cuda.captures == 3 and cuda.most == 1


def test_the_batched_engine_replays_a_graph_per_bucket_with_each_streams_state():
    """Groups of 3 and 1 streams replay the 4- and 1-graphs; every stream gets its own answer
    (equal to the eager engine's up to the rows' float rounding)."""
    torch.manual_seed(0)
    st = RecognizerStepper(_model(), TestProtocol(crop_size=48, scale_size=54), list("abcdefg"))
    cuda = RecordingCuda()
    graphed, eager = BatchedEngine(st, graphs=True, backend=cuda), BatchedEngine(st)
    videos = np.random.default_rng(0).integers(0, 256, (4, 3, 60, 80, 3), dtype=np.uint8)
    gs = [graphed.new_state() for _ in range(4)]
    es = [eager.new_state() for _ in range(4)]
    for t in range(3):
        n = 3 if t < 2 else 1  # two ticks of three streams, then one alone
        prep = [st.prepare(videos[i, t]) for i in range(n)]
        got = graphed.step(gs[:n], prep)
        want = eager.step(es[:n], prep)
        for g, w in zip(got, want):
            assert (g - w).abs().max() <= 1e-5
    assert graphed.stats.graphs == 2 and cuda.captures == 2
    assert all(s.buffers[0].shape[0] == 1 for s in gs[:3])  # each stream holds its own row
