"""The gate in the running server, on loopback (``tsm ui`` behind a token, headless Chromium):

* a page served by the test on another port of 127.0.0.1, opened in the browser that is signed
  in to the app, cannot open the app's websocket (so cannot run the app or clear its caches),
  and an upload forged from it (the user's cookies, the XSRF header, its origin) is refused;
* a cookie of arbitrary bytes gets 401 and one log line, never a traceback;
* 50 parallel wrong sign-ins: 5 answered, 45 refused at once (429);
* SIGTERM (what systemd and ``docker stop`` send) removes the uploads' temporary folder;
* a websocket opened while signed in cannot clear the caches once its sign-in expired.
"""

from __future__ import annotations

import http.server
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import pytest

from tools.headless import CHROMIUM, CHROMIUM_ARGS, running_app
from tools.loadtest import log_tracebacks
from tools.random_models import write_checkpoints
from tools.sample_videos import sample_video
from ui.gate import COOKIE, LOGIN_PATH
from ui_fixtures import write_dissection_runs, write_temporal_data

pytestmark = pytest.mark.slow
TOKEN = "correct horse battery"
WAIT_MS = 120_000
CACHE_LINE = 'cache_memory_bytes{cache_type="st_cache_'
EVIL_PAGE = """<!doctype html><html><body><script>
window.attack = new Promise((resolve) => {
  const seen = {opened: false, messages: 0};
  const ws = new WebSocket("%(ws)s");
  ws.binaryType = "arraybuffer";
  ws.onopen = () => { seen.opened = true; ws.send(new Uint8Array(%(rerun)s));
                      ws.send(new Uint8Array(%(clear)s)); };
  ws.onmessage = () => { seen.messages += 1; };
  ws.onclose = () => setTimeout(() => resolve(seen), 500);
  setTimeout(() => resolve(seen), 15000);
});
</script></body></html>"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("gated")
    write_dissection_runs(root / "runs", write_temporal_data(root / "data"))
    write_checkpoints(root / "runs" / "compare")
    return root / "runs"


def _back_msg(**fields) -> list:
    from streamlit.proto.BackMsg_pb2 import BackMsg

    msg = BackMsg()
    if fields.get("rerun"):
        msg.rerun_script.query_string = ""
        msg.rerun_script.page_script_hash = ""
    if fields.get("clear"):
        msg.clear_cache = True
    return list(msg.SerializeToString())


@contextmanager
def _evil_site(app_url: str):
    """A page on another port of 127.0.0.1 that opens the app's websocket, runs the app and
    asks it to clear its caches; yields the page's URL."""
    page = EVIL_PAGE % {
        "ws": app_url.replace("http://", "ws://") + "/_stcore/stream",
        "rerun": _back_msg(rerun=True),
        "clear": _back_msg(clear=True),
    }

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = page.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/evil.html"
    finally:
        server.shutdown()


def _client(requests, cookies: dict = {}):
    http = requests.Session()
    http.headers["Connection"] = "close"
    for k, v in cookies.items():
        http.cookies.set(k, v)
    return http


def _cache_lines(http, url: str) -> list[str]:
    text = http.get(f"{url}/_stcore/metrics").text
    return [line for line in text.splitlines() if line.startswith(CACHE_LINE)]


def _caches(lines: list[str]) -> set[str]:
    """The cached resources (loaded models, result stores) named by metrics lines, their sizes
    left out; cached data expire on their own (ttl), resources only when cleared."""
    return {line.rsplit(" ", 1)[0] for line in lines if "st_cache_resource" in line}


def _sign_in(page, url: str) -> None:
    page.goto(url)
    page.get_by_label("Access token").fill(TOKEN)
    page.get_by_role("button", name="Open").click()
    page.get_by_text("Attention", exact=True).first.click(timeout=WAIT_MS)
    page.get_by_text("TSN frame 0/3").first.wait_for(timeout=WAIT_MS)


def _upload_video(page) -> None:
    page.get_by_text("Any two checkpoints on any video").click()
    page.get_by_text("Upload a video").click()
    page.locator('input[type="file"]').set_input_files(
        str(sample_video("carphone_pristine.mp4")), timeout=WAIT_MS
    )
    page.get_by_text("carphone_pristine.mp4").first.wait_for(timeout=WAIT_MS)


def test_a_page_on_another_port_cannot_act_on_a_signed_in_app(runs, tmp_path):
    import requests
    from playwright.sync_api import sync_playwright

    temp = tmp_path / "server_tmp"
    temp.mkdir()
    log = tmp_path / "ui.log"
    env = {"TSM_UI_TOKEN": TOKEN, "TMPDIR": str(temp)}
    with running_app(runs, log, **env) as url, sync_playwright() as pw, _evil_site(url) as evil:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            app = context.new_page()
            _sign_in(app, url)
            cookies = {c["name"]: c["value"] for c in context.cookies()}
            signed = _client(requests, cookies)
            before = _cache_lines(signed, url)
            assert before, "no cached function to clear"
            # the other port's page, in the same signed-in browser
            attacker = context.new_page()
            attacker.goto(evil)
            seen = attacker.evaluate("window.attack")
            assert seen == {"opened": False, "messages": 0}
            time.sleep(6)  # the metrics' cache sizes are refreshed every 5 s
            assert _cache_lines(signed, url) == before
            # an upload forged with everything the other page can read or send
            xsrf = cookies["_streamlit_xsrf"]
            forged = signed.put(
                f"{url}/_stcore/upload_file/s/f1",
                files={"file": ("a.bin", b"\x00" * 1000)},
                headers={"X-Xsrftoken": xsrf, "Origin": evil.rsplit("/", 1)[0]},
            )
            assert (forged.status_code, forged.text) == (403, "Cross-origin request refused.\n")
            _upload_video(app)  # the app's own page still uploads
            assert len(list(temp.glob("tsm_ui_uploads_*"))) == 1
            context.close()
        finally:
            browser.close()

        # a cookie of any bytes: 401 and one log line
        raw = f"{COOKIE}=4600.\xc3\xa9.abc".encode("latin-1")
        for _ in range(3):
            bad = requests.get(url, headers={"Cookie": raw, "Connection": "close"})
            assert bad.status_code == 401

        # 50 wrong sign-ins at once
        def wrong(i: int) -> int:
            data = {"token": f"guess {i}"}
            return requests.post(url + LOGIN_PATH, data=data, allow_redirects=False).status_code

        with ThreadPoolExecutor(50) as pool:
            statuses = list(pool.map(wrong, range(50)))
        assert (statuses.count(401), statuses.count(429)) == (5, 45), statuses
    # SIGTERM (running_app stops the server with it): the uploads' folder went with the server
    assert list(temp.glob("tsm_ui_uploads_*")) == []
    text = log.read_text()
    assert text.count("refused a credential this server did not sign (127.0.0.1)") == 1
    assert text.count("wrong access token from 127.0.0.1") == 5 and "guess" not in text
    assert "refused a websocket request to /_stcore/stream from origin" in text
    reports, disconnects = log_tracebacks(text)
    assert reports == disconnects, text[-3000:]


def test_an_open_websocket_cannot_act_once_its_sign_in_expired(runs, tmp_path):
    import requests
    from playwright.sync_api import sync_playwright
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    lifetime_s = 30.0
    log = tmp_path / "ui.log"
    args = ("--sign-in-hours", lifetime_s / 3600)
    with running_app(runs, log, args=args, TSM_UI_TOKEN=TOKEN) as url, sync_playwright() as pw:

        def signed_in():
            http = _client(requests)
            ok = http.post(url + LOGIN_PATH, data={"token": TOKEN}, allow_redirects=False)
            assert ok.status_code == 303
            return http

        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:  # a user's page fills the caches
            _sign_in(browser.new_page(), url)
        finally:
            browser.close()
        http = signed_in()
        signed_at = time.monotonic()
        deadline = signed_at + 30
        while not _cache_lines(http, url) and time.monotonic() < deadline:
            time.sleep(0.5)
        before = _cache_lines(http, url)
        assert _caches(before), "no cached resource to clear"
        header = {"Cookie": f"{COOKIE}={http.cookies[COOKIE]}"}
        ws_url = url.replace("http://", "ws://") + "/_stcore/stream"
        with connect(ws_url, subprotocols=["streamlit"], additional_headers=header) as ws:
            time.sleep(max(0.0, signed_at + lifetime_s + 1 - time.monotonic()))
            ws.send(bytes(_back_msg(clear=True)))
            with pytest.raises(ConnectionClosed):
                ws.recv(timeout=30)
        time.sleep(6)  # the metrics' cache sizes are refreshed every 5 s
        assert _caches(before) <= _caches(_cache_lines(signed_in(), url))  # none cleared
    text = log.read_text()
    assert text.count("closed a websocket whose credential expired (127.0.0.1)") == 1
    reports, disconnects = log_tracebacks(text)
    assert reports == disconnects, text[-3000:]
