"""The app under load, reduced: four headless Chromium sessions at once on a loopback ``tsm ui``
(attention on a 1280x720 upload, downscaled and cut by the decoded-size limit, then the online recognizer and both detectors streamed for
four frames each, within a bounded time). No session may see an error; every session gets its maps and its frames;
every session's upload folder is gone once its page is closed. The full run and its figures:
``benchmarks/load_app.py`` (docs/results.md)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

pytestmark = pytest.mark.slow
SESSIONS, FRAMES, STREAM_S = 4, 4, 120.0  # each stream: 4 frames, at most 2 minutes


def test_four_sessions_at_once(tmp_path):
    from load_app import load_test
    from ui.loadtest import report

    fig = load_test(tmp_path, SESSIONS, STREAM_S, "tiny", FRAMES, ("--max-decoded-mp", "20"))
    print(report(fig))
    assert fig["errors"] == [] and fig["log_tracebacks"] == 0
    assert fig["maps_done"] == SESSIONS
    # bigbuckbunny.mp4: 132 frames of 1280x720, decoded at 640x360 = 230,400 pixels a frame,
    # so 20 megapixels hold 86 of them
    assert fig["limits_notes"] == [
        "Sampled from the first 86 of the video's 132 frames at 640x360, downscaled from "
        "1280x720 to the working resolution (limits: 300 frames, shorter side 360 px, 20 "
        "megapixels decoded; tsm ui --max-frames N --frame-size PX --max-decoded-mp MP changes "
        "them)."]
    assert all(n >= FRAMES for n in fig["recognizer_frames"]), fig["recognizer_frames"]
    assert all(n >= FRAMES for n in fig["detectors_frames"]), fig["detectors_frames"]
    assert fig["recognizer_ms_median"] > 0 and fig["detectors_ms_median"] > 0
    assert fig["folders_made"] == SESSIONS and fig["folders_left"] == 0
    assert 100 < fig["server_peak_mb"] < 8000
