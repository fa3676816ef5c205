"""The gate's checks beyond the credential (ui.gate), on the ASGI middleware alone: requests
that act on the app only from its own origin (a page on another port of the same host is
refused), a cookie of arbitrary bytes refused with one log line, an open websocket closed on its
first message after its credential expired, sign-in attempts limited per client and overall.
The same gate in the running server against a real cross-origin page: test_gate_browser.py."""

from __future__ import annotations

import asyncio
import logging
import re

import pytest

from ui.gate import Credentials, Gate, SignInLimiter, parse_origin, same_origin
from ui_fixtures import asgi_scope

TOKEN = "correct horse battery"
SECRET = bytes(range(32))
APP = b"127.0.0.1:8501"
EVIL = "http://127.0.0.1:8799"


class _Run:
    """One connection through ``gate``: the app behind it reads ``incoming`` (receive()
    results) and sends one message after each; what reached the client is kept."""

    def __init__(self, gate_for, scope, incoming=({"type": "http.request", "body": b""},)):
        self.reached, self.got, self.sent = [], [], []
        queue = list(incoming)

        async def app(scope, receive, send):
            self.reached.append(scope["path"])
            for _ in range(len(incoming)):
                message = await receive()
                self.got.append(message)
                await send({"type": "websocket.send", "text": "answer"})
                if message["type"] == "websocket.disconnect":
                    return

        async def receive():
            return queue.pop(0)

        async def send(message):
            self.sent.append(message)

        asyncio.run(gate_for(app)(scope, receive, send))

    @property
    def status(self):
        return self.sent[0].get("status") if self.sent else None


def _gate(token=TOKEN, origins=(), clock=None):
    """``(make, credentials)``: ``make(app)`` is one gate (its log notes and sign-in counts
    kept from run to run) in front of ``app``."""
    creds = Credentials(SECRET)
    extra = {"clock": clock} if clock is not None else {}
    one = Gate(None, token, origins, credentials=creds, wrong_delay_s=0, **extra)

    def make(app):
        one.app = app
        return one

    return make, creds


def _origin(value: str) -> tuple:
    return ((b"origin", value.encode()),)


def test_requests_that_act_on_the_app_come_from_its_own_origin():
    make, creds = _gate()
    cookie = creds.issue().encode()
    own = _origin("http://127.0.0.1:8501")
    ws = ("/_stcore/stream", "GET", "websocket")
    upload = ("/_stcore/upload_file/s/f", "PUT", "http")
    # the signed-in user's cookie, sent by a page on another port of the same host
    for path, method, kind in (ws, upload, ("/_stcore/upload_file/s/f", "DELETE", "http")):
        evil = _Run(make, asgi_scope(path, method, kind, cookie, _origin(EVIL)))
        assert evil.reached == [], (path, method)
        closed = {"type": "websocket.close", "code": 1008}
        assert evil.sent == [closed] if kind == "websocket" else evil.status == 403
        assert _Run(make, asgi_scope(path, method, kind, cookie, own)).reached == [path]
    referer = ((b"referer", f"{EVIL}/evil.html".encode()),)
    assert _Run(make, asgi_scope(*ws, cookie, referer)).reached == []
    assert _Run(make, asgi_scope(*ws, cookie, _origin("null"))).reached == []
    assert _Run(make, asgi_scope(*ws, cookie, _origin("https://127.0.0.1:8501"))).reached == []
    assert _Run(make, asgi_scope(*ws, cookie)).reached == [
        ws[0]
    ]  # no page: not a browser's request
    # reading is not acting: a page may link to the app (the credential still decides)
    assert _Run(make, asgi_scope("/", "GET", "http", cookie, _origin(EVIL))).reached == ["/"]


def test_without_a_token_the_origin_is_still_checked():
    make, _ = _gate(token=None)
    evil = _Run(make, asgi_scope("/_stcore/stream", kind="websocket", headers=_origin(EVIL)))
    assert evil.reached == [] and evil.sent == [{"type": "websocket.close", "code": 1008}]
    own = asgi_scope("/_stcore/stream", kind="websocket", headers=_origin("http://127.0.0.1:8501"))
    assert _Run(make, own).reached == ["/_stcore/stream"]


def test_behind_a_proxy_only_the_listed_origins_act():
    make, creds = _gate(origins=("https://app.example",))
    cookie = creds.issue().encode()
    proxied = asgi_scope(
        "/_stcore/stream", "GET", "websocket", cookie, _origin("https://app.example")
    )
    assert _Run(make, proxied).reached == ["/_stcore/stream"]
    direct = asgi_scope(
        "/_stcore/stream", "GET", "websocket", cookie, _origin("http://127.0.0.1:8501")
    )
    assert _Run(make, direct).reached == []


def test_origins_parsed_and_compared_by_hand():
    assert parse_origin("HTTPS://App.Example:8443/") == "https://app.example:8443"
    for bad in ("app.example", "https://app.example/x", "ws://h", "https://u@h", "https://h?q"):
        with pytest.raises(ValueError, match=re.escape(f"origin {bad!r}: expected")):
            parse_origin(bad)
    wss = {"type": "websocket", "scheme": "wss", "headers": [(b"host", b"h:1")]}
    assert same_origin({**wss, "headers": [*wss["headers"], (b"origin", b"https://h:1")]})
    assert not same_origin({**wss, "headers": [*wss["headers"], (b"origin", b"http://h:1")]})


def test_a_cookie_of_any_bytes_is_refused_with_one_log_line(caplog):
    make, creds = _gate()
    mac = creds.issue().split(".")[2].encode()
    caplog.set_level(logging.WARNING, logger="ui.gate")
    for _ in range(3):  # the same client again: no more lines
        page = _Run(make, asgi_scope("/", cookie=b"4600.\xc3\xa9." + mac))
        assert page.status == 401 and page.reached == []
    ws = _Run(make, asgi_scope("/_stcore/stream", kind="websocket", cookie=b"1.\xff\xfe.x"))
    assert ws.sent == [{"type": "websocket.close", "code": 1008}]
    lines = [r.getMessage() for r in caplog.records]
    assert lines == ["refused a credential this server did not sign (10.0.0.1)"]


def test_an_open_websocket_closes_on_its_first_message_after_expiry(caplog):
    now = [1000.0]
    make, _ = _gate(clock=lambda: now[0])
    cookie = Credentials(SECRET, lifetime_s=60).issue(now=1000.0).encode()
    messages = [{"type": "websocket.receive", "bytes": b"clear_cache"}] * 2

    run = _Run(make, asgi_scope("/_stcore/stream", kind="websocket", cookie=cookie), messages)
    assert run.got == [messages[0], messages[1]]  # before expiry: both reach the app
    now[0] = 1000.0
    caplog.set_level(logging.WARNING, logger="ui.gate")
    incoming = [messages[0], {**messages[1], "bytes": b"after"}]

    def late(app):
        gate = make(app)

        async def call(scope, receive, send):
            async def tick():
                message = await receive()
                now[0] += 40.0  # 1040 after the first, 1080 after the second
                return message

            await gate(scope, tick, send)

        return call

    run = _Run(late, asgi_scope("/_stcore/stream", kind="websocket", cookie=cookie), incoming)
    assert run.got == [messages[0], {"type": "websocket.disconnect", "code": 1008}]
    closes = [m for m in run.sent if m["type"] == "websocket.close"]
    answers = [m for m in run.sent if m["type"] == "websocket.send"]
    assert closes == [{"type": "websocket.close", "code": 1008}] and len(answers) == 1
    assert [r.getMessage() for r in caplog.records] == [
        "closed a websocket whose credential expired (10.0.0.1)"
    ]


def test_the_limiter_counts_by_hand():
    lim = SignInLimiter(per_client=2, overall=3, window_s=10)
    assert lim.admit("a", now=0) is None and lim.admit("a", now=1) is None
    assert lim.admit("a", now=2) == 8.0  # a's first attempt leaves the window at 10
    assert lim.admit("b", now=3) is None
    assert lim.admit("c", now=4) == 6.0  # all three slots taken; the oldest leaves at 10
    assert lim.admit("a", now=10.5) is None  # the attempt at 0 has left the window
    lim.succeeded("a")
    assert lim.count("a", now=10.5) == 0 and lim.count("b", now=10.5) == 1
    with pytest.raises(ValueError, match="limits must be positive: per_client=0"):
        SignInLimiter(per_client=0)


async def _sign_in(the_gate, token: str, client: str):
    body = f"token={token}".encode()
    scope = asgi_scope(
        "/_tsm/login",
        "POST",
        headers=(
            (b"content-type", b"application/x-www-form-urlencoded"),
            (b"content-length", str(len(body)).encode()),
            (b"origin", b"http://127.0.0.1:8501"),
        ),
        client=client,
    )
    sent = []

    async def receive():
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message):
        sent.append(message)

    await the_gate(scope, receive, send)
    return sent[0]["status"], dict(sent[0]["headers"])


def test_fifty_parallel_wrong_sign_ins_are_throttled(caplog):
    caplog.set_level(logging.WARNING, logger="ui.gate")
    the_gate = Gate(None, TOKEN, credentials=Credentials(SECRET), wrong_delay_s=0.2)

    async def storm():
        wrong = [_sign_in(the_gate, "guess%d" % i, "10.0.0.9") for i in range(50)]
        return await asyncio.gather(*wrong)

    answers = asyncio.run(storm())
    statuses = [s for s, _ in answers]
    assert statuses.count(401) == 5 and statuses.count(429) == 45
    assert {h[b"retry-after"] for s, h in answers if s == 429} == {b"60"}
    # the right token from this client waits too; another client may still sign in
    assert asyncio.run(_sign_in(the_gate, TOKEN.replace(" ", "+"), "10.0.0.9"))[0] == 429
    assert asyncio.run(_sign_in(the_gate, TOKEN.replace(" ", "+"), "10.0.0.7"))[0] == 303
    lines = [r.getMessage() for r in caplog.records]
    assert lines[:5] == [
        f"wrong access token from 10.0.0.9 ({n} in the last 60 s)" for n in range(1, 6)
    ]
    assert lines[5:] == ["sign-in throttled for 10.0.0.9"]
    assert not any("guess" in line or "horse" in line for line in lines)  # never the token


def test_attempts_from_many_clients_meet_the_overall_limit():
    the_gate = Gate(None, TOKEN, credentials=Credentials(SECRET), wrong_delay_s=0)

    async def spread():
        return [(await _sign_in(the_gate, "x", f"10.1.0.{i}"))[0] for i in range(25)]

    assert asyncio.run(spread()) == [401] * 20 + [429] * 5


def test_an_upload_goes_in_only_if_the_sessions_page_takes_it():
    from ui.app.upload_allowance import MULTIPART_OVERHEAD, UploadAllowance

    uploads = UploadAllowance(clock=lambda: 0.0)
    uploads.box("s", "video", max_bytes=1000, max_uploads=2)
    make, creds = _gate()
    the_gate = make(None)
    the_gate.uploads = uploads
    cookie = creds.issue().encode()

    def put(session: str, length: int) -> _Run:
        headers = ((b"content-length", str(length).encode()),)
        scope = asgi_scope(
            f"/_stcore/upload_file/{session}/f", "PUT", cookie=cookie, headers=headers
        )
        return _Run(make, scope)

    assert put("s", 1000 + MULTIPART_OVERHEAD).reached == ["/_stcore/upload_file/s/f"]
    over = put("s", 1001 + MULTIPART_OVERHEAD)  # one byte over the box's limit
    assert (over.status, over.reached) == (413, [])
    assert put("s", 10).reached == ["/_stcore/upload_file/s/f"]
    third = put("s", 10)  # the box takes two an hour
    assert (third.status, third.reached) == (429, [])
    assert b"2 uploads in the last hour; the limit is 2" in third.sent[1]["body"]
    other = put("t", 10)  # a session whose page has no box
    assert (other.status, other.reached) == (413, [])
    assert (
        other.sent[1]["body"] == b"Upload refused: no upload box is open on this session's page.\n"
    )
