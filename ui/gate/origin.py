"""Same-origin checks: which page a request that acts on the app comes from.

A browser sends ``Origin`` with every websocket handshake and every request other than a plain
``GET``/``HEAD`` (``Referer`` when an old browser leaves ``Origin`` out). Cookies do not
separate ports, so a page on another port of the same host (TensorBoard, Jupyter, a dev server)
gets the signed-in user's cookie attached to its requests to the app; only the origin tells
them apart. The app's own origin is ``scheme://host:port`` as the browser addressed it (the
``Host`` header), or, behind a reverse proxy that changes the scheme or host, the origins the
operator lists (``tsm ui --allow-origin https://app.example.com``).

A request with neither header does not come from a web page (a script, ``curl``): the
credential alone decides for it.
"""

from __future__ import annotations

from typing import Iterable, Optional
from urllib.parse import urlsplit

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def parse_origin(text: str) -> str:
    """``scheme://host[:port]`` of an origin the operator lists, lower-cased; ValueError naming
    ``text`` for anything else (a path, a query, a scheme other than http/https)."""
    parts = urlsplit(text.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.path not in ("", "/"):
        raise ValueError(
            f"origin {text!r}: expected scheme://host[:port] with http or https, no path"
        )
    if parts.query or parts.fragment or "@" in parts.netloc:
        raise ValueError(f"origin {text!r}: expected scheme://host[:port], nothing else")
    return f"{parts.scheme}://{parts.netloc}".lower()


def _header(scope: dict, name: bytes) -> Optional[str]:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def request_origin(scope: dict) -> Optional[str]:
    """The origin the request says it comes from: ``Origin``, else the scheme and host of
    ``Referer``, lower-cased; ``"null"`` for an opaque origin; None when neither is sent."""
    origin = _header(scope, b"origin")
    if origin is not None:
        return origin.strip().lower()
    referer = _header(scope, b"referer")
    if referer is None:
        return None
    parts = urlsplit(referer.strip())
    return f"{parts.scheme}://{parts.netloc}".lower() if parts.netloc else "null"


def own_origin(scope: dict) -> Optional[str]:
    """``scheme://host`` of the app as this request addressed it (http for ws, https for wss)."""
    host = _header(scope, b"host")
    if not host:
        return None
    secure = scope.get("scheme") in ("https", "wss")
    return f"{'https' if secure else 'http'}://{host.strip()}".lower()


def needs_origin(scope: dict) -> bool:
    """Whether a request acts on the app: a websocket, or any method but GET/HEAD/OPTIONS."""
    return scope["type"] == "websocket" or scope.get("method", "GET") not in SAFE_METHODS


def same_origin(scope: dict, allowed: Iterable[str] = ()) -> bool:
    """Whether ``scope`` comes from the app's own page: its origin is the app's own (the
    listed ``allowed`` origins when there are any, else ``scheme://Host``), or it sends none."""
    origin = request_origin(scope)
    if origin is None:
        return True
    allowed = set(allowed)
    return origin in allowed if allowed else origin == own_origin(scope)
