"""What the gate itself answers: the sign-in page, plain refusals, and the posted form."""

from __future__ import annotations

import html
from typing import Optional
from urllib.parse import parse_qs

LOGIN_PATH = "/_tsm/login"
MAX_FORM_BYTES = 4096
TITLE = "TSM vs TSN"
PAGE_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
        b"frame-ancestors 'none'",
    ),
    (b"x-frame-options", b"DENY"),
]
HTML = b"text/html; charset=utf-8"
TEXT = b"text/plain; charset=utf-8"


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


async def respond(
    send, status: int, body: bytes, content_type: bytes, headers: list = (), head_only: bool = False
) -> None:
    """An HTTP response that is never cached."""
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


async def form_token(scope, receive) -> Optional[str]:
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
