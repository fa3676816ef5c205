"""The app's live feeds (server side, no browser): every viewer's frames through the server's one
model per checkpoint, batched across viewers; each viewer's answers equal its stream run alone
(to float rounding: the app keeps the CPU's fast kernels);
the frame sent back shows both models side by side; the meter counts what was answered and
shown; the recorder keeps the frames answered; a viewer who leaves is forgotten."""

from __future__ import annotations

import json
import time

import numpy as np
import torch
from PIL import Image

from tools.random_models import write_checkpoints
from tsm_apps.live.engine import BatchedEngine
from tsm_apps.live.scheduler import Scheduler
from ui.app.sources import live, server_track


def _hubs(tmp_path):
    paths = write_checkpoints(tmp_path)
    return {
        "TSN": live.recognizer_hub("TSN", paths["tsn"]),
        "TSM": live.recognizer_hub("TSM", paths["tsm"]),
    }


def _ticked(hubs: dict) -> dict:
    """The hubs' models under schedulers without a thread: the test ticks them itself, so both
    viewers' frames are waiting when a model steps (as when two cameras deliver at once)."""
    for h in hubs.values():
        h.close()
    return {
        n: live.Hub(n, h.model, Scheduler(BatchedEngine(h.model.stepper), n), h.kind)
        for n, h in hubs.items()
    }


def _alone(hub, frames):
    """The frames through the hub's model, one stream by itself (batch 1, fresh state)."""
    stepper = hub.model.stepper
    engine = BatchedEngine(stepper)
    state = engine.new_state()
    return [engine.step([state], [stepper.prepare(f)])[0] for f in frames]


def _wait(cond, timeout=60.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return False


def test_two_viewers_share_each_model_in_one_batch_and_get_their_own_answers(tmp_path):
    hubs = _ticked(_hubs(tmp_path))
    try:
        rng = np.random.default_rng(0)
        videos = [rng.integers(0, 256, (6, 48, 64, 3), dtype=np.uint8) for _ in range(2)]
        feeds = [
            live.Feed(hubs, f"viewer {i}", live.Recorder(tmp_path / "rec", f"v{i}"))
            for i in range(2)
        ]
        out = None
        for t in range(6):  # both viewers offer a frame, then each model steps: lossless
            for feed, video in zip(feeds, videos):
                out = feed.offer(video[t])
            assert [h.scheduler.tick() for h in hubs.values()] == [2, 2]
        assert out.shape == (48 + 16, 2 * 64, 3) and out.dtype == np.uint8
        for hub in hubs.values():  # the two viewers stepped together, one batch a frame
            assert hub.scheduler.engine.stats.sizes == {2: 6}
        for i, (feed, video) in enumerate(zip(feeds, videos)):
            for name, hub in hubs.items():
                want = _alone(hub, video)
                lines = (
                    (tmp_path / "rec" / f"v{i}" / name / "answers.jsonl").read_text().splitlines()
                )
                got = [json.loads(x) for x in lines]
                assert [g["frame"] for g in got] == list(range(6))
                for g, w in zip(got, want):  # the recorded running top-k: the window of `want`
                    assert g["top"][0]["index"] == int(torch.argmax(w))
                    probs = torch.softmax(w, 0)
                    assert all(abs(t["prob"] - float(probs[t["index"]])) <= 1e-5 for t in g["top"])
                saved = np.asarray(Image.open(tmp_path / "rec" / f"v{i}" / name / "000003.png"))
                assert np.array_equal(saved, video[3])  # the frame the model stepped, lossless
            fig = feed.figures()
            assert (
                fig["offered"] == 6 and fig["TSM"]["answered"] == 6 and fig["TSM"]["dropped"] == 0
            )
            assert fig["TSM"]["cache_bytes"] > 0 and fig["TSN"]["cache_bytes"] is None
        # the frame sent back shows each model's newest answer: the shown count follows
        feeds[0].compose(videos[0][5])
        fig = feeds[0].figures()
        assert fig["TSM"]["shown"] >= 1 and fig["TSM"]["shown_ms"]["p50"] >= 0
        for f in feeds:
            f.close()
        assert _wait(
            lambda: (
                hubs["TSM"].scheduler.streams == []
                or all(s.closed for s in hubs["TSM"].scheduler.streams)
            )
        )
    finally:
        for h in hubs.values():
            h.close()


def test_a_fast_source_drops_frames_and_the_answer_stays_current(tmp_path):
    hubs = _hubs(tmp_path)
    try:
        feed = live.Feed({"TSM": hubs["TSM"]}, "camera")
        frames = np.random.default_rng(1).integers(0, 256, (40, 48, 64, 3), dtype=np.uint8)
        for f in frames:  # as fast as Python goes: much faster than the model
            feed.offer(f)
        assert _wait(lambda: feed.streams["TSM"].done or feed.streams["TSM"]._pending is None)
        assert _wait(lambda: feed.answers().get("TSM", (0,))[0] == 39)
        s = feed.streams["TSM"]
        assert s.dropped > 0 and s.stepped + s.dropped == 40
        feed.close()
    finally:
        for h in hubs.values():
            h.close()


def test_a_viewer_whose_frames_stop_is_forgotten(tmp_path, monkeypatch):
    monkeypatch.setattr(live, "IDLE_CLOSE_S", 0.5)
    hubs = _hubs(tmp_path)
    try:
        feed = live.Feed({"TSM": hubs["TSM"]}, "left the page")
        feed.offer(np.zeros((48, 64, 3), np.uint8))
        assert _wait(lambda: feed.streams["TSM"].stepped == 1)
        assert _wait(lambda: hubs["TSM"].scheduler.streams == [], timeout=10)
        assert "no frame for 0.5 s" in feed.figures()["TSM"]["error"]
    finally:
        for h in hubs.values():
            h.close()


def test_a_file_played_by_the_server_reaches_webrtc_as_frames_then_ends(tmp_path):
    """A server-side source (a file here; a URL takes the same path) as the WebRTC track the
    Live view sends: its frames in order, then the end of the track; a URL the policy refuses
    is one line before anything opens."""
    import asyncio

    import pytest
    from aiortc.mediastreams import MediaStreamError

    from tsm_apps.data.video import read_video_frames
    from tsm_apps.data.video_writer import write_video
    from tsm_apps.live.policy import StreamPolicy

    shades = (np.arange(6, dtype=np.uint8) * 40)[:, None, None, None]
    clip = write_video(
        tmp_path / "clip.mp4", np.zeros((6, 32, 48, 3), np.uint8) + shades, fps=50, crf=0
    )
    want = read_video_frames(clip, range(6))
    track = server_track.server_track(
        server_track.open_server_source(str(clip), StreamPolicy(), None)
    )

    async def frames():
        got = []
        while True:
            try:
                got.append((await track.recv()).to_ndarray(format="rgb24"))
            except MediaStreamError:
                return got

    got = asyncio.run(frames())
    index = [next(i for i, w in enumerate(want) if np.array_equal(g, w)) for g in got]
    assert index == sorted(set(index)) and index[-1] == 5  # in order, newest kept, to the end
    assert track.error is None
    with pytest.raises(ValueError, match="loopback address"):
        server_track.open_server_source("rtsp://127.0.0.1/x", StreamPolicy(), None)
