"""The app's server, as ``tsm ui`` starts it: ``streamlit run ui/server.py [--server.* ...]``.

Streamlit finds ``app`` below (an ``st.App`` of ``ui/app/main.py``) and serves it with uvicorn;
this module adds two things around Streamlit's own routes:

* :class:`ui.gate.Gate` in front of every route: requests that act on the app only from the
  app's own origin (or those in ``TSM_UI_ALLOWED_ORIGINS``) and, with an access token in
  ``TSM_UI_TOKEN``, only with the sign-in credential (:mod:`ui.gate` says why a middleware);
* SIGTERM (systemd, ``docker stop``) stops the server as Ctrl-C does, so what it leaves on
  exit (the uploads' temporary folder) is removed either way;
* a session whose page has gone is closed (:class:`SessionCloser`) while Streamlit still holds
  it for a reconnect, so its media (``/media/...``), uploads and state go with it. Streamlit
  itself only drops a disconnected session from its store after ``server.disconnectedSessionTTL``
  without shutting it down, which leaves its media served for as long as the server runs.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import threading
import time
from contextlib import asynccontextmanager
from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware

from ui.app import access
from ui.app.settings import ENV_ORIGINS, ENV_SIGN_IN_HOURS, ENV_TOKEN
from ui.app.upload_allowance import UPLOADS
from ui.gate import CREDENTIAL_HOURS, CREDENTIALS, Gate

SCRIPT = Path(__file__).resolve().parent / "app" / "main.py"
CLOSE_EVERY_S = 1.0
# The GIL switch interval of the server (Python's default: 5 ms). Model steps release the GIL
# around every torch operator; beside the Python-bound threads of other sessions (page runs, the
# event loop) each re-take could wait a whole interval, and a live step slowed by 10-100x
# (benchmarks/gil_switch.py, docs/history/app-before-webrtc.md §6.4).
SWITCH_INTERVAL_S = 0.001
_LOG = logging.getLogger(__name__)


class SessionCloser:
    """Closes the sessions that drew the app (:data:`ui.app.access.DRAWN_SESSIONS`) once they
    have not been connected for ``grace_s`` seconds; :meth:`step` runs on the server's event
    loop (``runtime.close_session`` must)."""

    def __init__(self, grace_s: float) -> None:
        self.grace_s = float(grace_s)
        self._away_since: dict[str, float] = {}

    def step(self, runtime, now: float) -> list[str]:
        """Close the sessions gone for ``grace_s`` at ``now`` (monotonic seconds); their ids."""
        closed = []
        for sid in list(access.DRAWN_SESSIONS):
            if runtime.is_active_session(sid):
                self._away_since.pop(sid, None)
                continue
            if now - self._away_since.setdefault(sid, now) >= self.grace_s:
                runtime.close_session(sid)  # media, uploads and state of the session go
                access.DRAWN_SESSIONS.discard(sid)
                UPLOADS.forget(sid)
                del self._away_since[sid]
                closed.append(sid)
        return closed


def reconnect_grace_s() -> float:
    """How long a session may be away before it is closed: Streamlit's reconnect window, less
    two rounds of the closer so that the session is still in Streamlit's store when closed."""
    from streamlit import config

    return max(0.0, float(config.get_option("server.disconnectedSessionTTL")) - 2 * CLOSE_EVERY_S)


@asynccontextmanager
async def _close_ended_sessions(_app):
    from streamlit.runtime import Runtime

    closer = SessionCloser(reconnect_grace_s())

    async def loop() -> None:
        while True:
            await asyncio.sleep(CLOSE_EVERY_S)
            try:
                closer.step(Runtime.instance(), time.monotonic())
            except Exception:  # keep closing later sessions; the server logs why
                _LOG.exception("closing ended sessions failed")

    task = asyncio.create_task(loop())
    try:
        yield None
    finally:
        task.cancel()


def middleware() -> list:
    """The gate, with the token, origins and sign-in lifetime of the environment (``tsm ui``
    checked them)."""
    token = os.environ.get(ENV_TOKEN) or None
    hours = float(os.environ.get(ENV_SIGN_IN_HOURS) or CREDENTIAL_HOURS)
    CREDENTIALS.lifetime_s = hours * 3600  # the server's one signer: the gate and the page
    origins = [o for o in os.environ.get(ENV_ORIGINS, "").split(",") if o]
    return [Middleware(Gate, token=token, origins=origins, uploads=UPLOADS)]


def _stop_as_interrupted(signum, frame) -> None:
    """SIGTERM handled as SIGINT: the server's own Ctrl-C path stops it and exit handlers run."""
    os.kill(os.getpid(), signal.SIGINT)


if threading.current_thread() is threading.main_thread():
    signal.signal(signal.SIGTERM, _stop_as_interrupted)


sys.setswitchinterval(SWITCH_INTERVAL_S)
app = st.App(SCRIPT, middleware=middleware(), lifespan=_close_ended_sessions)
