"""The access gate (ui.gate) on its own: the signed credential against a hand-computed HMAC,
and the ASGI middleware answering without ever reaching the app (or reading a body) when the
credential is missing. The same gate in the running server: tests/test_ui/test_server.py."""

from __future__ import annotations

import asyncio
import hashlib
import hmac

import pytest

from ui import gate
from ui.gate import COOKIE, Credentials, Gate
from ui_fixtures import asgi_scope

TOKEN = "correct horse battery"
SECRET = bytes(range(32))


def _mac(payload: str, secret: bytes = SECRET) -> str:  # RFC 2104 HMAC-SHA256, hex
    return hmac.new(secret, payload.encode(), hashlib.sha256).hexdigest()


def test_credential_is_signed_and_expires():
    creds = Credentials(SECRET, lifetime_s=3600)
    value = creds.issue(now=1000.5)
    expiry, nonce, mac = value.split(".")
    assert expiry == "4600" and len(nonce) == 16 and mac == _mac(f"4600.{nonce}")
    assert creds.valid(value, now=4599) and not creds.valid(value, now=4600)
    assert creds.valid(f"9999999999.abc.{_mac('9999999999.abc')}", now=0)  # built by hand
    assert not Credentials(bytes(32)).valid(value, now=0)  # another server's secret
    for bad in (
        None,
        "",
        "4600",
        f"5600.{nonce}.{mac}",
        f"4600.{nonce}x.{mac}",
        value + "0",
        f"-1.{nonce}.{_mac(f'-1.{nonce}')}",
        f"4600.{nonce}.{mac}.x",
        "é.é.é",
        f"4600.é.{mac}",  # a client controls every byte of its cookie
        f"4600.\xc3\xa9.{mac}",
        f"4600.{nonce}.{mac[:-1]}é",
        f"²3.{nonce}.{_mac(f'²3.{nonce}')}",
    ):
        assert not creds.valid(bad, now=0), bad


def test_cookie_lasts_the_browser_session_and_is_not_readable_by_scripts():
    assert gate.cookie_header("v", secure=False) == f"{COOKIE}=v; Path=/; HttpOnly; SameSite=Lax"
    assert gate.cookie_header("v", secure=True).endswith("; SameSite=Lax; Secure")
    assert "Max-Age" not in gate.cookie_header("v", True)
    assert "Expires" not in gate.cookie_header("v", True)


def test_token_compare():
    assert gate.token_matches(TOKEN, TOKEN)
    assert not gate.token_matches(TOKEN[:-1], TOKEN) and not gate.token_matches(TOKEN + " ", TOKEN)
    assert not gate.token_matches("", TOKEN) and gate.token_matches("é" * 12, "é" * 12)


class _Exchange:
    """One request through a :class:`Gate` (``TOKEN``, or the gate given): what it sent back,
    whether the app behind it was reached, and how often it read the request body."""

    def __init__(
        self,
        scope: dict,
        body: bytes = b"",
        creds: Credentials | None = None,
        make_gate=None,
    ) -> None:
        self.sent, self.reached, self.reads = [], [], 0
        self.body = body

        async def app(scope, receive, send):
            self.reached.append(scope["path"])

        async def receive():
            self.reads += 1
            return {"type": "http.request", "body": self.body, "more_body": False}

        async def send(message):
            self.sent.append(message)

        if make_gate is None:
            the_gate = Gate(app, TOKEN, credentials=creds or Credentials(SECRET), wrong_delay_s=0)
        else:
            the_gate = make_gate(app)
        asyncio.run(the_gate(scope, receive, send))

    @property
    def status(self) -> int:
        return self.sent[0]["status"]

    @property
    def headers(self) -> dict:
        return {k.decode(): v.decode() for k, v in self.sent[0]["headers"]}

    @property
    def text(self) -> str:
        return b"".join(m.get("body", b"") for m in self.sent[1:]).decode()


def test_without_the_credential_nothing_reaches_the_app():
    page = _Exchange(asgi_scope("/"))
    assert page.status == 401 and not page.reached
    assert 'name="token"' in page.text and "<script" not in page.text
    assert page.headers["cache-control"] == "no-store"
    head = _Exchange(asgi_scope("/", "HEAD"))
    assert head.status == 401 and head.text == ""
    ws = _Exchange(asgi_scope("/_stcore/stream", kind="websocket"))
    assert ws.sent == [{"type": "websocket.close", "code": 1008}] and not ws.reached
    for path in (
        "/media/0a1b2c.jpg",
        "/_stcore/metrics",
        "/_stcore/host-config",
        "/static/js/index.js",
        "/_stcore/health/../metrics",
    ):
        ex = _Exchange(asgi_scope(path))
        assert (ex.status, ex.reached) == (401, []), path
    upload = _Exchange(
        asgi_scope("/_stcore/upload_file/s/f", "PUT", headers=((b"content-length", b"104857600"),)),
        body=b"x" * 1024,
    )
    assert (upload.status, upload.text, upload.reads, upload.reached) == (
        401,
        "Sign in first.\n",
        0,
        [],
    )  # refused before one byte of the body was read
    expired = Credentials(SECRET, lifetime_s=-1).issue()
    assert _Exchange(asgi_scope("/media/a.jpg", cookie=expired)).status == 401
    assert _Exchange(asgi_scope("/media/a.jpg", cookie="1.2.3")).status == 401


def test_bare_health_status_and_the_credential_pass():
    assert _Exchange(asgi_scope("/_stcore/health")).reached == ["/_stcore/health"]
    assert _Exchange(asgi_scope("/_stcore/health", "POST")).status == 401
    value = Credentials(SECRET).issue()
    for path, method, kind in (
        ("/", "GET", "http"),
        ("/media/a.jpg", "GET", "http"),
        ("/_stcore/upload_file/s/f", "PUT", "http"),
        ("/_stcore/metrics", "GET", "http"),
        ("/_stcore/stream", "GET", "websocket"),
    ):
        ex = _Exchange(asgi_scope(path, method, kind, cookie=value))
        assert ex.reached == [path] and ex.sent == [], path


def _login(body: bytes, monkeypatch) -> _Exchange:
    headers = (
        (b"content-type", b"application/x-www-form-urlencoded"),
        (b"content-length", str(len(body)).encode()),
    )
    return _Exchange(asgi_scope(gate.LOGIN_PATH, "POST", headers=headers), body=body)


def test_login_sets_the_credential(monkeypatch):
    ok = _login(b"token=correct+horse+battery", monkeypatch)
    assert ok.status == 303 and ok.headers["location"] == "/" and not ok.reached
    name, _, rest = ok.headers["set-cookie"].partition("=")
    value = rest.split(";")[0]
    assert name == COOKIE and Credentials(SECRET).valid(value)
    assert rest == value + "; Path=/; HttpOnly; SameSite=Lax"
    for body in (
        b"token=correct+horse+batter",
        b"token=",
        b"",
        b"token=a&token=b",
        b"token=correct+horse+battery&token=x",
    ):
        wrong = _login(body, monkeypatch)
        assert wrong.status == 401 and "set-cookie" not in wrong.headers, body
        assert "Wrong access token." in wrong.text
    big = _login(b"token=" + b"x" * gate.MAX_FORM_BYTES, monkeypatch)
    assert big.status == 401 and big.reads == 0  # larger than a form: not read


def test_an_empty_token_is_refused():
    with pytest.raises(ValueError, match="the token, when given, must not be empty"):
        Gate(None, "")
