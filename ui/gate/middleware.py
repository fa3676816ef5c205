"""The gate: an ASGI middleware in front of every route of the app's server (see :mod:`ui.gate`
for why a middleware)."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Callable, Iterable, Optional

from .credentials import COOKIE, CREDENTIALS, Credentials, cookie_header, token_matches
from .origin import needs_origin, request_origin, same_origin
from .pages import HTML, LOGIN_PATH, PAGE_HEADERS, TEXT, form_token, login_page, respond
from .throttle import SignInLimiter

HEALTH_PATH = "/_stcore/health"
WRONG_TOKEN_DELAY_S = 1.0
LOG_EVERY_S = 60.0  # one log line per kind of refusal and client in this long
_LOG = logging.getLogger("ui.gate")


class _Notes:
    """One-line log records, at most one per (kind, client) every :data:`LOG_EVERY_S`: a
    client repeating a refused request cannot flood the log."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock, self._last = clock, {}

    def warn(self, kind: str, client: str, text: str) -> None:
        now = self.clock()
        if now - self._last.get((kind, client), -LOG_EVERY_S) < LOG_EVERY_S:
            return
        if len(self._last) > 4096:
            self._last.clear()
        self._last[(kind, client)] = now
        _LOG.warning("%s", text)


def _client(scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "unknown client"


def _cookie(scope) -> Optional[str]:
    from starlette.requests import HTTPConnection

    return HTTPConnection(scope).cookies.get(COOKIE)


def _upload_session(scope) -> Optional[str]:
    """The session id of a ``PUT /_stcore/upload_file/<session id>/<file id>``, else None."""
    parts = scope["path"].split("/")
    if scope.get("method") != "PUT" or len(parts) < 4 or parts[-3] != "upload_file":
        return None
    return parts[-2]


def _until(expiry: float, clock, receive, send, on_close: Callable[[], None]):
    """``receive``/``send`` of a websocket that closes (1008) on its first message after
    ``expiry``: that message never reaches the app, which is told the client left."""
    closed = False

    async def checked_receive():
        nonlocal closed
        message = await receive()
        if message["type"] == "websocket.receive" and clock() >= expiry:
            closed = True
            on_close()
            await send({"type": "websocket.close", "code": 1008})
            return {"type": "websocket.disconnect", "code": 1008}
        return message

    async def guarded_send(message):
        if not closed:
            await send(message)

    return checked_receive, guarded_send


class Gate:
    """ASGI middleware (``ui.gate`` docstring). Every request that acts on the app (a websocket,
    any method but GET/HEAD/OPTIONS) must come from the app's own origin or the ``origins``
    listed (403). With a ``token``, a request also needs a valid credential: without one only
    ``GET``/``HEAD`` of :data:`HEALTH_PATH` goes on, a websocket is closed before it is accepted
    (HTTP 403), a page request gets the sign-in page (401), any other a plain 401, before its
    body is read; an open websocket is closed on its first message after its credential
    expired. ``POST`` :data:`LOGIN_PATH` with the right token sets the credential and redirects
    to the app (303); a wrong one waits ``wrong_delay_s`` and shows the page again (401);
    ``limiter`` refuses attempts past its limits at once (429 with ``Retry-After``). With
    ``uploads`` (:class:`ui.app.upload_allowance.UploadAllowance` or alike: ``refusal(session
    id, Content-Length) -> reason or None``), an upload request is refused (413; 429 past the
    count) before its body is read unless the session's page has a box that takes it; the HTTP
    server delivers no more body than Content-Length states, so the stated length is the
    length."""

    def __init__(
        self,
        app,
        token: Optional[str] = None,
        origins: Iterable[str] = (),
        credentials: Credentials = CREDENTIALS,
        limiter: Optional[SignInLimiter] = None,
        wrong_delay_s: float = WRONG_TOKEN_DELAY_S,
        clock: Callable[[], float] = time.time,
        uploads=None,
    ) -> None:
        if token is not None and not token:
            raise ValueError("Gate: the token, when given, must not be empty")
        self.app, self.token, self.origins = app, token, tuple(origins)
        self.credentials, self.wrong_delay_s, self.clock = credentials, wrong_delay_s, clock
        self.limiter = limiter if limiter is not None else SignInLimiter()
        self.notes = _Notes(time.monotonic)
        self.uploads = uploads

    async def __call__(self, scope, receive, send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):  # lifespan
            return await self.app(scope, receive, send)
        if needs_origin(scope) and not same_origin(scope, self.origins):
            self.notes.warn(
                "origin",
                _client(scope),
                f"refused a {kind} request to {scope['path']} from origin "
                f"{request_origin(scope)!r} ({_client(scope)}): not the app's own",
            )
            return await self._refuse(scope, send, 403, b"Cross-origin request refused.\n")
        if self.token is None:
            return await self._admitted(scope, receive, send)
        path, method = scope["path"], scope.get("method", "")
        if kind == "http" and path == LOGIN_PATH and method == "POST":
            return await self._login(scope, receive, send)
        value = _cookie(scope)
        expiry = self.credentials.expiry(value)
        if expiry is not None and expiry > self.clock():
            if kind == "websocket":
                receive, send = _until(expiry, self.clock, receive, send, self._expired(scope))
            return await self._admitted(scope, receive, send)
        if value is not None and expiry is None:
            self.notes.warn(
                "credential",
                _client(scope),
                f"refused a credential this server did not sign ({_client(scope)})",
            )
        if path == HEALTH_PATH and method in ("GET", "HEAD"):
            return await self.app(scope, receive, send)
        if kind == "http" and method in ("GET", "HEAD"):
            page = login_page()
            return await respond(send, 401, page, HTML, PAGE_HEADERS, head_only=method == "HEAD")
        await self._refuse(scope, send, 401, b"Sign in first.\n")

    async def _admitted(self, scope, receive, send) -> None:
        """The app, for a request the origin and credential checks let through; an upload
        only if the session's page takes it."""
        session = _upload_session(scope) if self.uploads is not None else None
        if session is not None:
            length = dict(scope["headers"]).get(b"content-length")
            reason = self.uploads.refusal(session, length.decode("latin-1") if length else None)
            if reason is not None:
                self.notes.warn("upload", _client(scope), f"refused an upload: {reason}")
                status = 429 if "in the last hour" in reason else 413
                return await respond(send, status, f"Upload refused: {reason}.\n".encode(), TEXT)
        await self.app(scope, receive, send)

    def _expired(self, scope) -> Callable[[], None]:
        def note() -> None:
            _LOG.warning("closed a websocket whose credential expired (%s)", _client(scope))

        return note

    async def _refuse(self, scope, send, status: int, text: bytes) -> None:
        if scope["type"] == "websocket":
            return await send({"type": "websocket.close", "code": 1008})
        await respond(send, status, text, TEXT)

    async def _login(self, scope, receive, send) -> None:
        client = _client(scope)
        wait = self.limiter.admit(client)
        if wait is not None:
            self.notes.warn("throttled", client, f"sign-in throttled for {client}")
            retry = str(max(1, int(wait + 0.999))).encode("ascii")
            return await respond(
                send, 429, b"Too many sign-in attempts.\n", TEXT, [(b"retry-after", retry)]
            )
        given = await form_token(scope, receive)
        if given is not None and token_matches(given, self.token):
            self.limiter.succeeded(client)
            cookie = cookie_header(self.credentials.issue(), scope.get("scheme") == "https")
            headers = [(b"location", b"/"), (b"set-cookie", cookie.encode())]
            return await respond(send, 303, b"", b"text/plain", headers)
        n = self.limiter.count(client)
        _LOG.warning(
            "wrong access token from %s (%d in the last %.0f s)", client, n, self.limiter.window_s
        )
        await asyncio.sleep(self.wrong_delay_s)
        await respond(send, 401, login_page("Wrong access token."), HTML, PAGE_HEADERS)
