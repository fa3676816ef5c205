"""The online detector on the live engine: streams joining, leaving and resetting in one batched
step get, box for box and bit for bit (the exact mode), what each stream gets alone; ``tsm detect
video``'s single stream is the same engine; ``tsm live --detector`` streams it (the ``tsm.live``
entry point)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from detection.inference import load_detector
from detection.live import DetectorStepper, stream_frames
from tools.random_models import write_detectors
from tsm_apps.live.engine import BatchedEngine
from tsm_apps.live.scheduler import Scheduler
from tsm_apps.live.stream import Frame


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    return write_detectors(tmp_path_factory.mktemp("dets"))


def _frames(seed, t=4, h=128, w=160):
    return np.random.default_rng(seed).integers(0, 256, (t, h, w, 3), dtype=np.uint8)


def _alone(detector, frames):
    """``frames`` through ``detector`` as one stream by itself (exact engine, batch 1)."""
    st = DetectorStepper(detector, score_thr=0.05)
    engine = BatchedEngine(st, exact=True)
    state = engine.new_state()
    return [engine.step([state], [st.prepare(f)])[0] for f in frames]


def _same(a, b):
    return (
        np.array_equal(a.boxes, b.boxes)
        and np.array_equal(a.scores, b.scores)
        and np.array_equal(a.label_ids, b.label_ids)
    )


def test_streams_joining_leaving_and_resetting_get_what_they_get_alone(folders):
    st = DetectorStepper(load_detector(folders["tsm"], device="cpu"), score_thr=0.05)
    videos = {"A": _frames(0), "B": _frames(1), "C": _frames(2, h=96, w=160)}  # C: another size
    sched = Scheduler(BatchedEngine(st, exact=True))
    got = {k: [] for k in videos}
    streams = {}
    plan = [("A", "B"), ("A", "B", "C"), ("A", "B", "C"), ("A", "C")]  # B leaves after tick 2
    sizes = []
    for tick, names in enumerate(plan):
        if tick == 3:
            streams.pop("B").close()
            streams["A"].reset()  # A starts afresh at frame 3
        for k in names:
            if k not in streams:
                streams[k] = sched.open(k, on_result=lambda r, k=k: got[k].append(r.output))
            idx = len(got[k])
            streams[k].submit(Frame(videos[k][idx], idx, None, 0.0))
        sched.tick()
        sizes.append(sched.engine.stats.sizes.copy())
    assert sched.engine.stats.sizes.get(2, 0) >= 2  # A and B stepped together
    alone = {k: _alone(st.detector, v) for k, v in videos.items()}
    assert all(_same(g, w) for g, w in zip(got["B"], alone["B"][:3]))
    assert all(_same(g, w) for g, w in zip(got["C"], alone["C"][:3]))
    assert all(_same(g, w) for g, w in zip(got["A"][:3], alone["A"][:3]))
    fresh = _alone(st.detector, videos["A"][3:])[0]
    assert _same(got["A"][3], fresh) and not _same(got["A"][3], alone["A"][3])
    assert sum(len(d.scores) for d in got["A"]) > 0  # boxes were found (random weights)


def test_tsn_detector_carries_nothing(folders):
    st = DetectorStepper(load_detector(folders["tsn"], device="cpu"), score_thr=0.05)
    assert st.modules == [] and st.kind == "TSN (no shift)"
    v = _frames(3, t=2)
    both = list(stream_frames(st.detector, v, 0.05))
    assert _same(both[1], next(stream_frames(st.detector, v[1:], 0.05)))


def test_tsm_live_streams_the_detector(folders, tmp_path):
    from tsm_apps.data.video_writer import write_video
    from tsm_apps.live.cli import LiveConfig, run

    clip = write_video(tmp_path / "clip.mp4", _frames(4, t=3), fps=10)
    out = tmp_path / "dets.jsonl"
    figures = run(
        LiveConfig(
            sources=[str(clip)],
            detector=str(folders["tsm"]),
            out=str(out),
            score_thr=0.05,
            progress=False,
        )
    )
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["frame"] for x in lines] == [0, 1, 2] and all(x["model"] == "detector" for x in lines)
    assert all(set(b) == {"class", "score", "box"} for x in lines for b in x["boxes"])
    assert list(figures.values())[0]["stepped"] == 3
