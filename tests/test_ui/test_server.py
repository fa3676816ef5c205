"""The served app behind a token, over HTTP on loopback: ``tsm ui`` started with
``TSM_UI_TOKEN`` on the attention runs folder (tiny TSN/TSM dissection runs), signed in with
headless Chromium, then probed with a plain HTTP client and a websocket client, with and without
the browser's credential: media (real URLs taken from the signed-in page), the upload endpoint,
``/_stcore/metrics`` and a websocket "clear cache" message all refuse without it and work with
it; a reload and a new tab keep the sign-in; a session's media is gone once its page is closed;
the page's menu has no "Clear cache" and no "Deploy".
"""

from __future__ import annotations

import socket
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tools.headless import CHROMIUM, CHROMIUM_ARGS, running_app
from tools.loadtest import log_tracebacks
from ui.gate import COOKIE, LOGIN_PATH
from ui_fixtures import write_dissection_runs, write_temporal_data

pytestmark = pytest.mark.slow
TOKEN = "correct horse battery"
WAIT_MS = 120_000
# Streamlit keeps a closed page's session this long for a reconnect; the server closes it
# (and drops its media) two seconds before: here, a second after the page went
RECONNECT_S = "3"
CACHE_LINE = 'cache_memory_bytes{cache_type="st_cache_'


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("served")
    write_dissection_runs(root / "runs", write_temporal_data(root / "data"))
    return root / "runs"


def _client(requests):
    """An HTTP client session that opens a connection per request: a kept-alive connection can
    be closed by the server (idle timeout) just as the next request goes out."""
    http = requests.Session()
    http.headers["Connection"] = "close"
    return http


def _sent_before_body(url: str, path: str) -> bytes:
    """The server's first answer to a PUT that promises 100 MB and sends 1 KB of it."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=20) as s:
        s.sendall(
            f"PUT {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nContent-Type: application/"
            f"octet-stream\r\nContent-Length: {100 * 2**20}\r\n\r\n".encode()
            + b"x" * 1024
        )
        return s.recv(4096)


def _ws_url(url: str) -> str:
    return url.replace("http://", "ws://") + "/_stcore/stream"


def _new_session(ws) -> str:
    """Run the app's script on websocket ``ws`` (as a browser's first message does) and return
    the session's id once the run finished."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    msg = BackMsg()
    msg.rerun_script.query_string = ""
    msg.rerun_script.page_script_hash = ""
    ws.send(msg.SerializeToString())
    session = None
    while True:
        fwd = ForwardMsg()
        fwd.ParseFromString(ws.recv(timeout=WAIT_MS / 1000))
        if fwd.WhichOneof("type") == "new_session":
            session = fwd.new_session.initialize.session_id
        if fwd.WhichOneof("type") == "script_finished":
            return session


def _cache_lines(http, url: str) -> list[str]:
    return [
        line
        for line in http.get(f"{url}/_stcore/metrics").text.splitlines()
        if line.startswith(CACHE_LINE)
    ]


def _signed_in_page(context, url: str):
    """A new tab of ``context`` on the app: the app itself, not the sign-in page."""
    page = context.new_page()
    page.goto(url)
    page.get_by_text("Attention", exact=True).first.wait_for(timeout=WAIT_MS)
    assert page.get_by_label("Access token").count() == 0
    return page


def test_every_route_needs_the_credential(runs, tmp_path):
    import requests
    from playwright.sync_api import expect, sync_playwright
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    env = {"TSM_UI_TOKEN": TOKEN, "STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL": RECONNECT_S}
    log = tmp_path / "ui.log"
    with running_app(runs, log, **env) as url, sync_playwright() as pw:
        anon = _client(requests)
        # without the credential: a sign-in page, a bare health status, nothing else
        page = anon.get(url)
        assert page.status_code == 401 and 'name="token"' in page.text
        assert "<script" not in page.text and "Attention" not in page.text
        assert anon.get(f"{url}/_stcore/health").text == "ok"
        for path in ("/_stcore/metrics", "/_stcore/host-config", "/media/0.jpg"):
            assert anon.get(url + path).status_code == 401, path
        assert _sent_before_body(url, "/_stcore/upload_file/s/f").startswith(
            b"HTTP/1.1 401 "
        )  # answered after 1 KB of the 100 MB: the body is never read
        with pytest.raises(InvalidStatus) as refused:
            connect(_ws_url(url), subprotocols=["streamlit"])
        assert refused.value.response.status_code == 403
        wrong = anon.post(url + LOGIN_PATH, data={"token": TOKEN[:-1]}, allow_redirects=False)
        assert wrong.status_code == 401 and "Wrong access token." in wrong.text
        assert COOKIE not in wrong.cookies

        # signed in with the browser: the credential is an HTTP-only, same-site session cookie
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            first = context.new_page()
            first.goto(url)
            first.get_by_label("Access token").fill(TOKEN)
            first.get_by_role("button", name="Open").click()
            first.get_by_text("Attention", exact=True).first.click(timeout=WAIT_MS)
            first.get_by_text("TSN frame 0/3").first.wait_for(timeout=WAIT_MS)
            imgs = first.locator('[data-testid="stImage"] img')
            expect(imgs).to_have_count(2, timeout=WAIT_MS)
            media = [imgs.nth(i).get_attribute("src") for i in range(2)]
            assert all(m.startswith(f"{url}/media/") for m in media), media
            # the menu offers nothing that acts on every user's caches, and no Deploy button
            assert first.get_by_test_id("stAppDeployButton").count() == 0
            first.get_by_test_id("stMainMenu").click()
            menu = first.get_by_test_id("stMainMenuList")
            expect(menu).to_contain_text("Print", timeout=WAIT_MS)
            assert "Clear cache" not in menu.inner_text() and "Rerun" not in menu.inner_text()
            first.keyboard.press("Escape")
            (cookie,) = [c for c in context.cookies() if c["name"] == COOKIE]
            assert (cookie["httpOnly"], cookie["sameSite"], cookie["expires"]) == (
                True,
                "Lax",
                -1,
            )  # -1: gone when the browser closes
            signed = _client(requests)
            signed.cookies.set(COOKIE, cookie["value"])
            for m in media:
                shown = signed.get(m)
                assert shown.status_code == 200 and shown.headers["content-type"] == "image/jpeg"
                assert anon.get(m).status_code == 401
            # a reload and a new tab keep the sign-in
            first.reload()
            first.get_by_text("Attention", exact=True).first.wait_for(timeout=WAIT_MS)
            assert first.get_by_label("Access token").count() == 0
            second = _signed_in_page(context, url)
            # the session that showed the media ends with its page: its media go with it
            first.close()
            deadline = time.monotonic() + 30
            while signed.get(media[0]).status_code == 200 and time.monotonic() < deadline:
                time.sleep(0.2)
            assert [signed.get(m).status_code for m in media] == [404, 404]
            second.reload()
            second.get_by_text("Attention", exact=True).first.wait_for(timeout=WAIT_MS)
            context.close()
        finally:
            browser.close()

        # the websocket, metrics and uploads with the credential (and Streamlit's XSRF cookie)
        signed.get(f"{url}/_stcore/health")  # Streamlit sets its XSRF cookie here
        assert "_streamlit_xsrf" in signed.cookies
        header = {"Cookie": "; ".join(f"{k}={v}" for k, v in signed.cookies.items())}
        with connect(_ws_url(url), subprotocols=["streamlit"], additional_headers=header) as ws:
            session = _new_session(ws)
            assert signed.get(f"{url}/_stcore/metrics").status_code == 200
            assert _cache_lines(signed, url), "no cached function to clear"
            clear = BackMsg()
            clear.clear_cache = True
            ws.send(clear.SerializeToString())
            upload = f"{url}/_stcore/upload_file/{session}/f1"
            files = {"file": ("a.bin", b"\x00" * 1000)}
            xsrf = {"X-Xsrftoken": signed.cookies["_streamlit_xsrf"]}
            # past the credential, an upload needs a box on the session's page: this session
            # ran the default view, which has none (pages with boxes upload: test_browser.py)
            taken = signed.put(upload, files=files, headers=xsrf)
            assert (taken.status_code, taken.text) == (
                413,
                "Upload refused: no upload box is open on this session's page.\n",
            )
            assert anon.put(upload, files=files, headers=xsrf).status_code == 401
            # the metrics' cache sizes are refreshed every 5 s: wait for the cleared caches
            deadline = time.monotonic() + 15
            while _cache_lines(signed, url) and time.monotonic() < deadline:
                time.sleep(0.5)
            assert _cache_lines(signed, url) == []
    # no exception of the app or the gate; Streamlit's own websocket handler may log a
    # WebSocketDisconnected chain when a page goes away mid-send (tools.loadtest.log_tracebacks)
    reports, disconnects = log_tracebacks(log.read_text())
    assert reports == disconnects, log.read_text()[-3000:]


def test_the_server_switches_threads_every_millisecond():
    """The served app's process takes the GIL switch interval from ``ui.server`` (1 ms, not
    Python's 5 ms): a model step beside busy page threads waits far less per operator
    (benchmarks/gil_switch.py)."""
    import subprocess
    import sys

    code = "import sys; import ui.server as s; print(sys.getswitchinterval(), s.SWITCH_INTERVAL_S)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    ).stdout.split()
    assert [float(v) for v in out] == [0.001, 0.001]
