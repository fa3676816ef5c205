"""The access gate in front of the app's server: with a token set, a client without a valid
credential gets a sign-in page and a bare health status, nothing else.

Why an ASGI middleware inside Streamlit's own server (``st.App(middleware=[...])``, see
:mod:`ui.server`) and not an authenticating proxy in front of a loopback Streamlit: every
request Streamlit answers — the page, its scripts, ``/media/...``, uploads
(``/_stcore/upload_file/...``), the websocket (``/_stcore/stream``) with its actions,
``/_stcore/metrics``, host configuration, components — passes through this one ``__call__`` in
the same process, before any of Streamlit's routes. There is no second port to reach around
it, no forwarding of websocket frames or streamed bodies to get wrong, and a refused request is
answered before one byte of its body is read (an upload never reaches memory). A check drawn
inside the page (the script) guards only the page; :func:`ui.app.access.gate` keeps one as a
second line.

The credential is a browser-session cookie (no ``Max-Age``: it goes when the browser closes;
``HttpOnly``, ``SameSite=Lax``, ``Secure`` over HTTPS) holding ``<expiry>.<nonce>.<mac>``:
``mac`` is HMAC-SHA256 of ``<expiry>.<nonce>`` under a random secret made once per server
process, compared in constant time, and refused after ``expiry`` (unix seconds). Reloads and
new tabs of the same browser send it, so the token is asked once per browser session; a server
restart signs everyone out. ``SameSite=Lax`` keeps the cookie off every cross-site subrequest
(websocket, upload, form post), which is what could act on the app from another site.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import html
import secrets
import time
from typing import Optional
from urllib.parse import parse_qs

COOKIE = "tsm_ui_credential"
LOGIN_PATH = "/_tsm/login"
HEALTH_PATH = "/_stcore/health"
CREDENTIAL_HOURS = 12.0
WRONG_TOKEN_DELAY_S = 1.0
MAX_FORM_BYTES = 4096
TITLE = "TSM vs TSN"


def token_matches(given: str, expected: str) -> bool:
    """Constant-time comparison of two tokens (as UTF-8 bytes)."""
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


class Credentials:
    """Signed credentials of one server: ``<expiry>.<nonce>.<mac>`` (module docstring)."""

    def __init__(
        self, secret: Optional[bytes] = None, lifetime_s: float = CREDENTIAL_HOURS * 3600
    ) -> None:
        self._secret = secret if secret is not None else secrets.token_bytes(32)
        self.lifetime_s = float(lifetime_s)

    def _mac(self, payload: str) -> str:
        return hmac.new(self._secret, payload.encode("ascii"), hashlib.sha256).hexdigest()

    def issue(self, now: Optional[float] = None) -> str:
        """A new credential, valid for :attr:`lifetime_s` seconds from ``now``."""
        now = time.time() if now is None else now
        payload = f"{int(now + self.lifetime_s)}.{secrets.token_hex(8)}"
        return f"{payload}.{self._mac(payload)}"

    def valid(self, value: Optional[str], now: Optional[float] = None) -> bool:
        """Whether ``value`` is a credential this server issued that has not expired."""
        parts = (value or "").split(".")
        if len(parts) != 3 or not (parts[0].isascii() and parts[0].isdigit()):
            return False
        expiry, nonce, mac = parts
        if not hmac.compare_digest(
            mac.encode("ascii", "replace"), self._mac(f"{expiry}.{nonce}").encode("ascii")
        ):
            return False
        return int(expiry) > (time.time() if now is None else now)


# the credentials of this server process: the gate signs with them and the page checks them
CREDENTIALS = Credentials()


def cookie_header(value: str, secure: bool) -> str:
    """The ``Set-Cookie`` value that hands ``value`` to the browser for its session."""
    return f"{COOKIE}={value}; Path=/; HttpOnly; SameSite=Lax" + ("; Secure" if secure else "")


def login_page(message: str = "") -> bytes:
    """The sign-in page: one form posting the token to :data:`LOGIN_PATH`; no app content,
    no script, no external resource."""
    note = f'<p class="err">{html.escape(message)}</p>' if message else ""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{TITLE}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{{font-family:sans-serif;max-width:24rem;margin:4rem auto;padding:0 1rem}}
input,button{{font-size:1rem;padding:.4rem;margin:.3rem 0}}input{{width:100%}}
.err{{color:#b00020}}</style></head>
<body><h1>{TITLE}</h1>{note}
<form method="post" action="{LOGIN_PATH}">
<label for="token">Access token</label>
<input id="token" name="token" type="password" autocomplete="current-password" autofocus>
<button type="submit">Open</button></form>
<p><small>The token was set when the server was started.</small></p></body></html>
""".encode("utf-8")


PAGE_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
        b"frame-ancestors 'none'",
    ),
    (b"x-frame-options", b"DENY"),
]


async def _respond(
    send, status: int, body: bytes, content_type: bytes, headers: list = (), head_only: bool = False
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", content_type),
                (b"content-length", str(len(body)).encode("ascii")),
                (b"cache-control", b"no-store"),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": b"" if head_only else body})


async def _form_token(scope, receive) -> Optional[str]:
    """The ``token`` field of a posted form of at most :data:`MAX_FORM_BYTES` bytes; None for
    a larger, malformed or abandoned one."""
    length = dict(scope["headers"]).get(b"content-length", b"0")
    if not length.isdigit() or int(length) > MAX_FORM_BYTES:
        return None
    body = b""
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        body += message.get("body", b"")
        if len(body) > MAX_FORM_BYTES:
            return None
        if not message.get("more_body"):
            break
    values = parse_qs(body.decode("utf-8", "replace")).get("token", [])
    return values[0] if len(values) == 1 else None


class TokenGate:
    """ASGI middleware: requests and websockets with a valid :data:`COOKIE` go on to ``app``;
    without one, only ``GET``/``HEAD`` of :data:`HEALTH_PATH` (Streamlit's bare status) goes
    on. A websocket is closed before it is accepted (the handshake gets HTTP 403); a page
    request gets the sign-in page (401); any other request a plain 401, before its body is
    read. ``POST`` :data:`LOGIN_PATH` with the right token sets the cookie and redirects to
    the app (303); a wrong one waits :data:`WRONG_TOKEN_DELAY_S` and shows the page again."""

    def __init__(self, app, token: str, credentials: Credentials = CREDENTIALS) -> None:
        if not token:
            raise ValueError("TokenGate needs a non-empty token")
        self.app, self.token, self.credentials = app, token, credentials

    def signed_in(self, scope) -> bool:
        from starlette.requests import HTTPConnection

        return self.credentials.valid(HTTPConnection(scope).cookies.get(COOKIE))

    async def __call__(self, scope, receive, send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):  # lifespan
            return await self.app(scope, receive, send)
        path, method = scope["path"], scope.get("method", "")
        if kind == "http" and path == LOGIN_PATH and method == "POST":
            return await self._login(scope, receive, send)
        if self.signed_in(scope) or (path == HEALTH_PATH and method in ("GET", "HEAD")):
            return await self.app(scope, receive, send)
        if kind == "websocket":
            return await send({"type": "websocket.close", "code": 1008})
        if method in ("GET", "HEAD"):
            return await _respond(
                send,
                401,
                login_page(),
                b"text/html; charset=utf-8",
                PAGE_HEADERS,
                head_only=method == "HEAD",
            )
        await _respond(send, 401, b"Sign in first.\n", b"text/plain; charset=utf-8")

    async def _login(self, scope, receive, send) -> None:
        given = await _form_token(scope, receive)
        if given is not None and token_matches(given, self.token):
            cookie = cookie_header(self.credentials.issue(), scope.get("scheme") == "https")
            return await _respond(
                send,
                303,
                b"",
                b"text/plain",
                [(b"location", b"/"), (b"set-cookie", cookie.encode())],
            )
        await asyncio.sleep(WRONG_TOKEN_DELAY_S)
        await _respond(
            send, 401, login_page("Wrong access token."), b"text/html; charset=utf-8", PAGE_HEADERS
        )
