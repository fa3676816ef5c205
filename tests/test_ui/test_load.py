"""The app under load, reduced: four headless Chromium sessions at once on a loopback ``tsm ui``
(attention on a 1280x720 upload, downscaled and cut by the decoded-size limit, then in the Live
view the browser's camera through the online recognizers and the detectors, TSN and TSM, until
each model answered four frames, within a bounded time). No session may see an error; every
session gets its maps and its answers, shown on the page; the sessions' streams of a model were
stepped together (a batch of more than one); every session's upload folder is gone once its page
is closed. The full run and its figures:
``benchmarks/load_app.py`` (docs/results.md)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

SESSIONS, FRAMES, STREAM_S = 4, 4, 120.0  # each stream: 4 frames, at most 2 minutes


@pytest.mark.slow
def test_four_sessions_at_once(tmp_path):
    from load_app import load_test
    from tools.loadtest import report

    fig = load_test(tmp_path, SESSIONS, STREAM_S, "tiny", FRAMES, ("--max-decoded-mp", "20"))
    print(report(fig))
    # no exception of the app in the server's log; Streamlit's own websocket handler may log a
    # WebSocketDisconnected chain when a page goes away mid-send (tools.loadtest.log_tracebacks)
    assert fig["errors"] == [] and fig["log_errors"] == 0
    assert fig["maps_done"] == SESSIONS
    # bigbuckbunny.mp4: 132 frames of 1280x720, decoded at 640x360 = 230,400 pixels a frame,
    # so 20 megapixels hold 86 of them
    assert fig["limits_notes"] == [
        "The maps are of the frames each model's test protocol samples from all 132 frames "
        "of the video (each panel names its video frame); decoded for the player: "
        "the first 86 of the video's 132 frames at 640x360, downscaled from "
        "1280x720 to the working resolution (limits: 300 frames, shorter side 360 px, 20 "
        "megapixels decoded; tsm ui --max-frames N --frame-size PX --max-decoded-mp MP changes "
        "them)."
    ]
    for kind in ("recognizer", "detectors"):
        assert all(n >= FRAMES for n in fig[f"{kind}_answered"]), fig[f"{kind}_answered"]
        assert all(r > 0 for r in fig[f"{kind}_rate"]), fig[f"{kind}_rate"]
        assert all(0 < s <= 1 for s in fig[f"{kind}_share"]), fig[f"{kind}_share"]
        assert all(p >= 0 for p in fig[f"{kind}_shown_p50"]), fig[f"{kind}_shown_p50"]
    assert fig["recognizer_batch"] > 1  # the sessions' streams were stepped together
    assert fig["folders_made"] == SESSIONS and fig["folders_left"] == 0
    assert 100 < fig["server_peak_mb"] < 8000


# the chain Streamlit 1.67's websocket handler logs when a page goes away mid-send (abridged from
# a server log of this test), and an exception of the app as Streamlit logs it
DISCONNECT = """Exception in ASGI application
Traceback (most recent call last):
  File "/v/lib/python3.11/site-packages/streamlit/web/server/starlette/starlette_websocket.py", line 516, in _websocket_endpoint
    data = await websocket.receive_bytes()
  File "/v/lib/python3.11/site-packages/starlette/websockets.py", line 131, in receive_bytes
    raise WebSocketDisconnected('WebSocket is not connected. Need to call "accept" first.')
starlette.websockets.WebSocketDisconnected: WebSocket is not connected. Need to call "accept" first.

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/v/lib/python3.11/site-packages/uvicorn/protocols/websockets/websockets_sansio_impl.py", line 409, in run_asgi
    result = await self.app(self.scope, self.receive, self.send)
  File "/v/lib/python3.11/site-packages/starlette/websockets.py", line 104, in send
    raise WebSocketDisconnected('Cannot call "send" once a close message has been sent.')
starlette.websockets.WebSocketDisconnected: Cannot call "send" once a close message has been sent.
  Stopping...
"""
APP_ERROR = """Uncaught app exception
Traceback (most recent call last):
  File "/v/lib/python3.11/site-packages/streamlit/runtime/scriptrunner/exec_code.py", line 129, in exec_func_with_error_handling
    result = func()
  File "/work/ui/app/views/attention.py", line 40, in render
    raise ValueError("boom")
ValueError: boom
"""


def test_server_log_reports_are_counted_and_streamlits_disconnects_told_apart():
    from tools.loadtest import log_tracebacks

    assert log_tracebacks("") == (0, 0)
    assert log_tracebacks(DISCONNECT) == (1, 1)  # one chained report, Streamlit's own
    assert log_tracebacks(APP_ERROR) == (1, 0)
    assert log_tracebacks(DISCONNECT + APP_ERROR + DISCONNECT) == (3, 2)
    # the same chain with a frame of the app in it is the app's
    assert log_tracebacks(
        DISCONNECT.replace(
            "/v/lib/python3.11/site-packages/starlette/websockets.py", "/work/ui/app/live.py"
        )
    ) == (1, 0)


def test_the_live_meter_is_read_as_the_page_writes_it():
    from tools.load_figures import Meter
    from ui.app.views.live import meter_text

    f = {
        "received": 160,
        "answered": 120,
        "shown": 114,
        "dropped": 40,
        "answered_ms": {"p50": 52.4, "p95": 90.0},
        "shown_ms": {"p50": None, "p95": None},
        "batch": 2,
        "step_ms": 31.2,
        "cache_bytes": 1536,
    }
    m = Meter.parse(meter_text(f, 6.0))
    assert (m.answered, m.rate, m.shown, m.share, m.dropped, m.batch) == (
        120,
        20.0,
        114,
        0.95,
        40,
        2,
    )
    assert m.answer_ms == (52.0, 90.0) and all(math.isnan(x) for x in m.shown_ms)
    with pytest.raises(ValueError, match="not a latency meter"):
        Meter.parse("playing: frame 3/249")
