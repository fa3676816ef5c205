"""The Live view (AppTest: the page without a browser): the models picked (the runs folder's TSN
and TSM by default, both detectors), the three sources, stream URLs checked before the server
opens anything (schemes, local and private addresses unless the operator allows them), a frame
folder refused; nothing raises. The WebRTC component is stood in for by :class:`FakeWebRTC`
(AppTest has no browser to connect it), which hands the page's frame callback the frames of a
real clip as a camera would and records what the page asked of the component; frames through a
real browser: test_browser_live.py."""

from __future__ import annotations

import shutil
import time
from types import SimpleNamespace

import pytest
import streamlit_webrtc

from tools.random_models import write_checkpoints, write_detectors
from tools.sample_videos import sample_video
from ui.app.settings import ENV_STREAM_HOSTS
from ui_fixtures import captions, write_vid_snippet

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def live_runs(tmp_path_factory):
    runs = tmp_path_factory.mktemp("live") / "runs"
    write_checkpoints(runs)
    write_detectors(runs)
    write_vid_snippet(runs / "data" / "vid")
    (runs / "videos").mkdir()
    shutil.copyfile(sample_video("carphone_pristine.mp4"), runs / "videos" / "carphone.mp4")
    return runs


class FakeWebRTC:
    """``webrtc_streamer`` as AppTest can run it: each call calls the frame callback with
    ``frames`` (one every ``gap_s``: the model keeps up, nothing dropped), keeps the frames sent
    back, and reports the stream as stopped."""

    def __init__(self, frames=(), gap_s=0.3):
        self.frames, self.gap_s, self.calls, self.sent = list(frames), gap_s, [], []

    def __call__(self, **kw):
        import av

        self.calls.append(kw)
        for f in self.frames:
            out = kw["video_frame_callback"](av.VideoFrame.from_ndarray(f, format="rgb24"))
            self.sent.append(out.to_ndarray(format="rgb24"))
            time.sleep(self.gap_s)
        self.frames = []
        return SimpleNamespace(state=SimpleNamespace(playing=False))


@pytest.fixture
def webrtc(monkeypatch):
    fake = FakeWebRTC()
    monkeypatch.setattr(streamlit_webrtc, "webrtc_streamer", fake)
    return fake


def _live(app_for, runs, mode="Online recognizers", **env):
    at = app_for(runs, **env).run()
    at.sidebar.radio(key="view").set_value("Live").run()
    at.radio(key="live_mode").set_value(mode).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def _errors(at) -> list:
    return [e.value for e in at.error]


def test_a_camera_through_both_recognizers_side_by_side(app_for, live_runs, webrtc):
    at = _live(app_for, live_runs)
    assert at.selectbox(key="live_ckpt_TSN").value.endswith("tsn/best.pth")
    assert at.selectbox(key="live_ckpt_TSM").value.endswith("tsm/best.pth")
    assert at.radio(key="live_source").value == "Camera (this browser)"
    assert any("Press START and allow the camera" in c for c in captions(at))
    call = webrtc.calls[-1]
    assert call["mode"].name == "SENDRECV" and call["player_factory"] is None
    assert call["rtc_configuration"] == {"iceServers": []}  # loopback and LANs need none
    # five frames of real footage from the "camera"
    from tsm_apps.data.video import read_video_frames

    webrtc.frames = read_video_frames(live_runs / "videos" / "carphone.mp4", range(5))
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert webrtc.sent[-1].shape == (144 + 16, 2 * 176, 3)  # TSN | TSM, each under its title
    texts = [m.value for m in at.markdown]
    for name in ("TSN", "TSM"):
        assert any(t.startswith(f"**{name}** on frame 4 (last 12 frames)") for t in texts), texts
    meters = [c for c in captions(at) if c.startswith("received ")]
    assert len(meters) == 2 and all(m.startswith("received 5 · answered 5 (") for m in meters), (
        meters
    )
    assert "no shift cache" in meters[0] and "shift cache" in meters[1]


@pytest.mark.parametrize(
    "url, reason",
    [
        ("file:///etc/passwd", "scheme file: is not a stream scheme"),
        ("concat:a.mp4|b.mp4", "is not a stream scheme"),
        ("http://127.0.0.1:8554/live.ts", "127.0.0.1 is a loopback address"),
        ("rtsp://192.168.1.20/stream", "192.168.1.20 is a private address"),
        ("http://169.254.169.254/latest/", "link-local address"),
    ],
)
def test_urls_the_server_must_not_open_are_refused_on_the_page(
    app_for, live_runs, webrtc, url, reason
):
    at = _live(app_for, live_runs)
    at.radio(key="live_source").set_value("Stream URL").run()
    at.text_input(key="live_url").input(url).run()
    assert any(e.startswith("Refused: ") and reason in e for e in _errors(at)), _errors(at)
    assert not at.exception


def test_an_allowed_local_stream_host_passes(app_for, live_runs, webrtc):
    at = _live(app_for, live_runs, **{ENV_STREAM_HOSTS: "127.0.0.0/8"})
    at.radio(key="live_source").set_value("Stream URL").run()
    at.text_input(key="live_url").input("udp://127.0.0.1:23000").run()
    assert _errors(at) == [] and not at.exception
    call = webrtc.calls[-1]
    assert call["mode"].name == "RECVONLY" and callable(call["player_factory"])


def test_a_video_file_plays_whole_and_a_frame_folder_is_refused(app_for, live_runs, webrtc):
    at = _live(app_for, live_runs)
    at.radio(key="live_source").set_value("Video file").run()
    at.radio(key="live_kind").set_value("Video in the runs folder").run()
    assert any("plays the whole file (120 frames)" in c for c in captions(at)), captions(at)
    at.radio(key="live_kind").set_value("VID val snippet").run()
    assert any("cannot be played live" in w.value for w in at.warning)
    assert not at.exception


def test_the_detectors_side_by_side_and_an_empty_runs_folder_says_what_to_do(
    app_for, live_runs, empty_runs, webrtc
):
    from tsm_apps.data.video import read_video_frames

    at = _live(app_for, live_runs, mode="Detectors")
    webrtc.frames = read_video_frames(live_runs / "videos" / "carphone.mp4", range(3))
    webrtc.gap_s = 1.5
    at.run()
    assert _errors(at) == [] and not at.exception
    texts = [m.value for m in at.markdown]
    for name in ("TSN", "TSM"):
        assert any(t.startswith(f"**{name}** on frame 2: ") for t in texts), texts
    at = _live(app_for, empty_runs)
    assert any("No recognizer checkpoint" in w.value for w in at.warning)
