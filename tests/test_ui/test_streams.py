"""Streams of many sessions through one loaded model at the same time: each session gets exactly
what it gets alone (weights shared, shift buffers and stream position its own)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from tools.random_models import write_checkpoints, write_detectors
from tsm_apps.data.protocol import TestProtocol
from ui.app import sources
from ui_fixtures import write_vid_snippet

SNIPPET = "data/vid/Data/VID/val/ILSVRC2015_val_00000000"


def _in_lockstep(work: list, steps: int) -> list:
    """Run each ``work[i](t)`` for t = 0..steps-1 in its own thread, all threads at frame t
    together (a barrier per frame), so the streams interleave on the shared model."""
    barrier, out, errors = threading.Barrier(len(work)), [[] for _ in work], []

    def run(i: int) -> None:
        try:
            for t in range(steps):
                barrier.wait(timeout=120)
                out[i].append(work[i](t))
        except Exception as e:  # surfaced below
            errors.append(e)
            barrier.abort()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(work))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    return out


@pytest.mark.slow
def test_two_sessions_stream_one_detector_at_once(tmp_path):
    runs = tmp_path / "runs"
    write_detectors(runs)
    write_vid_snippet(runs / "data" / "vid")
    frames = sources.read_frames(runs / SNIPPET, 9)
    detector = sources.load_detector(sources.DetectorSpec("TSM", runs / "detection" / "tsm"))
    alone = sources.detect(detector, frames)
    assert all(len(d.scores) > 10 for d in alone)
    streams = [sources.DetectorStream(detector, iter(frames)) for _ in range(2)]
    got = _in_lockstep([lambda t, s=s: next(s) for s in streams], len(frames))
    for session in got:
        for t, dets in enumerate(session):
            np.testing.assert_array_equal(dets.boxes, alone[t].boxes)
            np.testing.assert_array_equal(dets.scores, alone[t].scores)
            assert dets.labels == alone[t].labels
    assert streams[0].cache_bytes > 0 and detector.model.test_stream.cache_bytes == 0


def test_live_recognizers_of_two_sessions_on_different_videos(tmp_path):
    """Two sessions stream videos of different sizes through one online model at once (a
    shared model used to fail with a shift-buffer shape mismatch)."""
    rec = sources.load_online(write_checkpoints(tmp_path)["tsm"])
    rng = np.random.default_rng(0)
    videos = [
        rng.integers(0, 256, (5, 40, 50, 3), dtype=np.uint8),
        rng.integers(0, 256, (5, 64, 48, 3), dtype=np.uint8),
    ]
    sizes = (32, 48)
    alone = []
    for v, size in zip(videos, sizes):
        live = sources.LiveRecognizer(rec, TestProtocol(scale_size=size, crop_size=size))
        alone.append([live.step(f) for f in v])
    lives = [
        sources.LiveRecognizer(rec, TestProtocol(scale_size=size, crop_size=size)) for size in sizes
    ]
    got = _in_lockstep([lambda t, i=i: lives[i].step(videos[i][t]) for i in range(2)], 5)
    for i in range(2):
        np.testing.assert_array_equal(np.stack(got[i]), np.stack(alone[i]))
