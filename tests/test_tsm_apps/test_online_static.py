"""The streaming step with static shift buffers written in place (the step a CUDA graph
captures), run eagerly on the CPU: equal to the eager step frame by frame, across ``reset()``,
for streams of different sizes; buffers keep their storage."""

from __future__ import annotations

import pytest
import torch

from tsm_apps import build_recognizer
from tsm_apps.models.online import OnlineRecognizer
from tsm_apps.models.shift import online_step_into
from tsm_apps.models.trunk import set_memory_format

STREAMS = ((1, 3, 32, 32), (2, 3, 48, 40))


def _model(fmt):
    torch.manual_seed(0)
    m = build_recognizer("resnet18", 5, 4, "online", width=0.25).eval()
    set_memory_format(m.backbone, fmt)
    return m


def _run(m, mode, frames, reset_at):
    """Logits and features of every frame; ``reset()`` before frame ``reset_at``."""
    out = []
    with OnlineRecognizer(m, mode=mode) as rec:
        for t, f in enumerate(frames):
            if t == reset_at:
                rec.reset()
            out.append((rec.step(f), rec.step_features(f) if t == 0 else None))
    return out


@pytest.mark.parametrize("fmt", [torch.contiguous_format, torch.channels_last])
def test_static_step_equals_eager_step_across_reset_for_two_stream_sizes(fmt):
    m = _model(fmt)
    g = torch.Generator().manual_seed(1)
    for shape in STREAMS:
        frames = torch.randn(5, *shape, generator=g)
        want = _run(m, "eager", frames, reset_at=3)
        got = _run(m, "static", frames, reset_at=3)
        for (a, fa), (b, fb) in zip(want, got):
            assert torch.equal(a, b)
            assert fa is None or torch.equal(fa, fb)
    # the reference itself depends on the past: without the reset, frame 3 differs
    no_reset = _run(m, "eager", frames, reset_at=-1)
    assert not torch.equal(no_reset[3][0], want[3][0])


def test_static_buffers_keep_their_storage_and_reset_zeroes_them_in_place():
    m = _model(torch.channels_last)
    g = torch.Generator().manual_seed(2)
    with OnlineRecognizer(m, mode="static") as rec:
        rec.step(torch.randn(STREAMS[1], generator=g))
        bufs = list(rec.state.buffers)
        ptrs = [b.data_ptr() for b in bufs]
        rec.step(torch.randn(STREAMS[1], generator=g))
        assert rec.state.static and [b.data_ptr() for b in rec.state.buffers] == ptrs
        assert all(b.abs().sum() > 0 for b in bufs)
        rec.reset()
        assert [b.data_ptr() for b in rec.state.buffers] == ptrs
        assert all(torch.count_nonzero(b) == 0 for b in bufs)
        # a new stream size is accepted right after reset(); mid-stream it is refused
        rec.step(torch.randn(STREAMS[0], generator=g))
        assert rec.state.buffers[0].shape[0] == 1
        with pytest.raises(ValueError, match=r"\(2, 3, 48, 40\).*reset"):
            rec.step(torch.randn(STREAMS[1], generator=g))


def test_auto_mode_is_eager_on_cpu_and_bad_mode_is_refused():
    m = _model(torch.channels_last)
    with OnlineRecognizer(m) as rec:
        rec.step(torch.zeros(STREAMS[0]))
        assert not rec.state.static
    with pytest.raises(ValueError, match="'graphs'"):
        OnlineRecognizer(m, mode="graphs")


@pytest.mark.parametrize("fmt", [torch.contiguous_format, torch.channels_last])
def test_online_step_into_equals_official_online_shift(fmt):
    """Step ``t`` equals frame ``t`` of the official online shift of the clip (zeros + slice
    copies: channels ``[0:fold]`` from frame ``t-1``); the buffer holds frame ``t``'s folds."""
    g = torch.Generator().manual_seed(3)
    clip = torch.randn(2, 4, 16, 3, 5, generator=g)  # (N, T, C, H, W), fold 2
    want = torch.zeros_like(clip)
    want[:, 1:, :2] = clip[:, :-1, :2]
    want[:, :, 2:] = clip[:, :, 2:]
    buffer = torch.zeros(2, 2, 3, 5).contiguous(memory_format=fmt)
    with torch.no_grad():
        for t in range(4):
            out = online_step_into(clip[:, t].contiguous(memory_format=fmt), buffer)
            assert torch.equal(out, want[:, t]) and out.is_contiguous(memory_format=fmt)
            assert torch.equal(buffer, clip[:, t, :2])
    with pytest.raises(ValueError, match="autograd off"):
        online_step_into(clip[:, 0], buffer)
    with pytest.raises(ValueError, match=r"\(2, 4, 3, 5\)"):
        with torch.no_grad():
            online_step_into(clip[:, 0], torch.zeros(2, 4, 3, 5))
