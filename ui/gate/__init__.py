"""The access gate in front of the app's server.

Every request Streamlit answers — the page, its scripts, ``/media/...``, uploads
(``/_stcore/upload_file/...``), the websocket (``/_stcore/stream``) with its actions,
``/_stcore/metrics``, host configuration, components — passes through one ASGI middleware,
:class:`Gate`, inside Streamlit's own server (``st.App(middleware=[...])``, :mod:`ui.server`),
before any of Streamlit's routes. Why a middleware and not an authenticating proxy in front of a
loopback Streamlit: there is no second port to reach around it, no forwarding of websocket
frames or streamed bodies to get wrong, and a refused request is answered before one byte of its
body is read (an upload never reaches memory). A check drawn inside the page guards only the
page; :func:`ui.app.access.gate` keeps one as a second line.

What the gate checks, module by module:

* :mod:`.origin`: a request that acts on the app (websocket, upload, any method but
  GET/HEAD/OPTIONS) comes from the app's own page, not from a page on another port of the same
  host, which the browser would send the user's cookie from (cookies do not separate ports);
* :mod:`.credentials`: with an access token, the signed, expiring credential (the sign-in
  cookie), re-checked on every message of an open websocket;
* :mod:`.throttle`: sign-in attempts limited per client and overall;
* :mod:`.pages`: the sign-in page and the gate's own answers;
* :mod:`.middleware`: :class:`Gate`, which puts these together.
"""

from .credentials import (
    COOKIE,
    CREDENTIAL_HOURS,
    CREDENTIALS,
    Credentials,
    cookie_header,
    token_matches,
)
from .middleware import HEALTH_PATH, WRONG_TOKEN_DELAY_S, Gate
from .origin import parse_origin, same_origin
from .pages import LOGIN_PATH, MAX_FORM_BYTES, login_page
from .throttle import SignInLimiter

__all__ = [
    "COOKIE",
    "CREDENTIAL_HOURS",
    "CREDENTIALS",
    "Credentials",
    "Gate",
    "HEALTH_PATH",
    "LOGIN_PATH",
    "MAX_FORM_BYTES",
    "SignInLimiter",
    "WRONG_TOKEN_DELAY_S",
    "cookie_header",
    "login_page",
    "parse_origin",
    "same_origin",
    "token_matches",
]
