"""The Live view (AppTest): its own entry in the sidebar; the online recognizer and both
detectors stepped (buffers carried, every frame equal to the whole video run at once), played
to the end in one script run, restarted; two sessions stepping in turn."""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

from tools.random_models import write_checkpoints, write_detectors
from tools.sample_videos import sample_video
from ui_fixtures import captions, image_captions, write_vid_annotations, write_vid_snippet

pytestmark = pytest.mark.slow
SNIPPET = "data/vid/Data/VID/val/ILSVRC2015_val_00000000"
DETECTORS = "Both detectors side by side"


@pytest.fixture(scope="module")
def live_runs(tmp_path_factory):
    runs = tmp_path_factory.mktemp("live") / "runs"
    write_detectors(runs)
    write_vid_snippet(runs / "data" / "vid")
    write_vid_annotations(runs / "data" / "vid")
    write_checkpoints(runs)
    (runs / "videos").mkdir()
    shutil.copyfile(sample_video("carphone_pristine.mp4"), runs / "videos" / "carphone.mp4")
    return runs


def _live(app_for, runs, mode: str = "Online recognizer", **kw):
    at = app_for(runs, **kw).run()
    assert "Live" in at.sidebar.radio(key="view").options
    at.sidebar.radio(key="view").set_value("Live").run()
    at.radio(key="live_mode").set_value(mode).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def _status(at) -> str:
    return next(c for c in captions(at) if re.match(r"(playing|paused|finished): frame", c))


def _reference(runs, frames) -> dict:
    """Each detector's detections of the whole snippet, one stream, straight from the sources."""
    from ui.app import sources

    return {
        name: sources.detect(
            sources.load_detector(sources.DetectorSpec(name, runs / "detection" / name.lower())),
            frames,
        )
        for name in ("TSN", "TSM")
    }


def _buffer_bytes(path: str) -> int:
    """Bytes of the online model's shift buffers for one 32x32 frame (float32)."""
    from tsm_apps import OnlineStep, load_checkpoint

    shapes = OnlineStep(load_checkpoint(path, shift="online")).buffer_shapes((1, 3, 32, 32))
    return 4 * sum(int(np.prod(s)) for s in shapes)


@pytest.mark.parametrize("model", ["tsn", "tsm"])
def test_recognizer_steps_plays_to_the_end_and_restarts(app_for, live_runs, model):
    from ui.app import sources
    from ui.app.settings import DecodeLimits

    at = _live(app_for, live_runs, max_frames=12)
    box = at.selectbox(key="live_ckpt_rec")
    assert box.value.endswith("tsm/best.pth")  # the first TSM by default
    path = str(live_runs / "train" / model / "best.pth")
    box.set_value(path).run()
    at.radio(key="live_kind").set_value("Video in the runs folder").run()
    assert any("press Stream or Step" in c for c in captions(at))
    for _ in range(2):
        at.button(key="live_rec_step").click().run()
    assert not at.exception and not at.error
    cache = (
        f"shift cache {_buffer_bytes(path) / 1024:.1f} kB"
        if model == "tsm"
        else "no shift cache (no temporal shift: nothing carried between frames)"
    )
    assert re.fullmatch(
        r"paused: frame 1/11 · last frame \d+ ms · model median \d+ ms · not "
        r"played yet · " + re.escape(cache),
        _status(at),
    ), _status(at)
    # the top-5 after two frames is the online model's on those frames, stepped here
    rec = sources.load_online(live_runs / "train" / model / "best.pth")
    live = sources.LiveRecognizer(rec, rec.protocol)
    frames = sources.read_video(
        live_runs / "videos" / "carphone.mp4", 12, DecodeLimits(12, 360, 70_000_000)
    ).frames  # the app's
    for f in frames[:2]:
        live.step(f)
    best, p = sources.top_classes(live.running(), rec.names, 1)[0]
    assert any(
        "online top-5 after 2 frames" in m.value and f"| {best} | {p:.3f} |" in m.value
        for m in at.markdown
    )
    # Play: one script run loops to the last frame, then the page shows a finished stream
    at.button(key="live_rec_play").click().run()
    assert not at.exception and not at.error
    assert re.match(
        r"finished: frame 11/11 · last frame \d+ ms · model median \d+ ms · "
        r"[\d.]+ frames/s while playing",
        _status(at),
    ), _status(at)
    assert at.button(key="live_rec_play").disabled and at.button(key="live_rec_pause").disabled
    at.button(key="live_rec_restart").click().run()
    assert any("press Stream or Step" in c for c in captions(at))


def test_detectors_step_carry_buffers_play_and_restart(app_for, live_runs):
    from ui.app import sources

    at = _live(app_for, live_runs, DETECTORS)
    assert any(c.startswith("Streaming all 6 frames of the video at 96x64") for c in captions(at))
    assert any("press Stream or Step" in c for c in captions(at))
    for _ in range(3):
        at.button(key="live_det_step").click().run()
    assert not at.exception and not at.error
    assert re.fullmatch(
        r"paused: frame 2/5 · last frame \d+ ms · model median \d+ ms · not "
        r"played yet",
        _status(at),
    ), _status(at)
    tsn, tsm = image_captions(at)
    assert len(at.get("image")) == 1  # both panels: one element
    assert tsn.startswith("TSN frame 2/5: ") and tsm.startswith("TSM frame 2/5: ")
    assert "no shift cache (no temporal shift: nothing carried between frames)" in tsn
    assert " · shift cache " in tsm and "shift cache 0.0 kB" not in tsm
    # frame 2 of the stream equals frame 2 of the whole video run in one go
    stream = at.session_state["live_det"]
    ref = _reference(live_runs, sources.read_frames(live_runs / SNIPPET, 9))
    for name in ("TSN", "TSM"):
        np.testing.assert_array_equal(stream.last[name][0].boxes, ref[name][2].boxes)
        np.testing.assert_array_equal(stream.last[name][0].scores, ref[name][2].scores)
    at.button(key="live_det_play").click().run()  # the rest in one run, then a finished page
    assert not at.exception and not at.error
    assert _status(at).startswith("finished: frame 5/5 · ")
    for name in ("TSN", "TSM"):
        np.testing.assert_array_equal(stream.last[name][0].scores, ref[name][5].scores)
    at.button(key="live_det_restart").click().run()
    assert any("press Stream or Step" in c for c in captions(at))
    assert not at.exception and at.session_state["live_det"] is not stream  # a new stream
    assert at.session_state["live_det"].t == -1 and at.session_state["live_det"].last is None


def test_two_sessions_stepping_in_turn_each_get_the_single_session_boxes(app_for, live_runs):
    """Two pages on one server (the detectors are loaded once and shared) step through the same
    snippet, their clicks interleaved and one page a frame ahead: every frame of each equals
    the detectors run once over the whole snippet."""
    from ui.app import sources

    ref = _reference(live_runs, sources.read_frames(live_runs / SNIPPET, 9))
    pages = [_live(app_for, live_runs, DETECTORS) for _ in range(2)]
    pages[0].button(key="live_det_step").click().run()
    seen = {0: [], 1: []}
    for _ in range(5):
        for i, at in enumerate(pages):
            at.button(key="live_det_step").click().run()
            assert not at.exception and not at.error
            s = at.session_state["live_det"]
            seen[i].append((s.t, {n: s.last[n][0] for n in ("TSN", "TSM")}))
    assert [t for t, _ in seen[0]] == [1, 2, 3, 4, 5] and [t for t, _ in seen[1]] == [0, 1, 2, 3, 4]
    for runs in seen.values():
        for t, dets in runs:
            for name in ("TSN", "TSM"):
                np.testing.assert_array_equal(dets[name].boxes, ref[name][t].boxes)
                np.testing.assert_array_equal(dets[name].scores, ref[name][t].scores)
    assert all(len(ref["TSM"][t].scores) > 10 for t in range(6))  # boxes to compare
