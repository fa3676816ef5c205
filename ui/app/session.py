"""Each browser session's private temporary folder, always cleaned up.

The server makes one upload area (a private ``mkdtemp`` folder, removed when the server exits);
each session gets its own folder in it on first use, ``session_<session id>`` (uploaded
checkpoints are kept there so the models can be loaded from a path). A background sweep removes
a session's folder once the session has ended — its page closed or gone for longer than
Streamlit keeps a disconnected session for a reconnect (``server.disconnectedSessionTTL``) —
or once it has not been used for ``idle_minutes``; the folder also goes when Streamlit drops
the session's state, and a removed folder is made again, empty, on the session's next use.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
import time
import uuid
import weakref
from pathlib import Path
from typing import Callable, Optional

import streamlit as st

PREFIX = "tsm_ui_uploads_"
SWEEP_EVERY_S = 5.0
STATE_KEY = "_session_folder"


class SessionFolder:
    """The private folder ``<area>/session_<owner>`` of one session; removed by :meth:`remove`,
    on garbage collection of this object, or at interpreter exit. Usable as a context manager
    (removed on exit)."""

    def __init__(self, area: Path, owner: Optional[str] = None) -> None:
        self.owner = owner or uuid.uuid4().hex
        self.path = Path(area) / f"session_{self.owner}"
        self.path.mkdir(mode=0o700, exist_ok=True)  # exists: an earlier state of this session
        self._finalizer = weakref.finalize(self, shutil.rmtree, str(self.path), True)

    def use(self) -> Path:
        """The folder (made again when a sweep removed it), marked as used now."""
        self.path.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.utime(self.path)
        return self.path

    def remove(self) -> None:
        self._finalizer()

    def __enter__(self) -> "SessionFolder":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def sweep(
    area: Path,
    idle_s: float,
    ended: Callable[[str], bool] = lambda owner: False,
    now: Optional[float] = None,
) -> list[Path]:
    """Remove the session folders of ``area`` whose session ``ended(owner)`` or that were not
    used for ``idle_s`` seconds; returns them."""
    now = time.time() if now is None else now
    removed = []
    for folder in sorted(Path(area).glob("session_*")):
        try:
            idle = now - folder.stat().st_mtime
        except FileNotFoundError:
            continue
        if idle > idle_s or ended(folder.name[len("session_") :]):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


class EndedSessions:
    """``ended(session id)``: the Streamlit runtime has not had the session connected for
    longer than it keeps a disconnected session (so it will not come back). Without a runtime
    (tests, bare mode) no session ends."""

    def __init__(self) -> None:
        self._away_since: dict[str, float] = {}

    def __call__(self, session_id: str) -> bool:
        from streamlit import config
        from streamlit.runtime import Runtime

        if not Runtime.exists():
            return False
        if Runtime.instance().is_active_session(session_id):
            self._away_since.pop(session_id, None)
            return False
        since = self._away_since.setdefault(session_id, time.monotonic())
        if time.monotonic() - since <= float(config.get_option("server.disconnectedSessionTTL")):
            return False
        del self._away_since[session_id]
        return True


@st.cache_resource(show_spinner=False)
def upload_area(idle_minutes: float) -> Path:
    """The server's upload area (one per process), removed at exit, swept every few seconds."""
    area = Path(tempfile.mkdtemp(prefix=PREFIX))
    atexit.register(shutil.rmtree, str(area), True)
    ended = EndedSessions()

    def run() -> None:
        while area.is_dir():
            sweep(area, idle_minutes * 60, ended)
            time.sleep(SWEEP_EVERY_S)

    threading.Thread(target=run, name="tsm-ui-sweep", daemon=True).start()
    return area


def _session_id() -> Optional[str]:
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    return ctx.session_id if ctx is not None else None


def folder(idle_minutes: float) -> Path:
    """This session's folder (made on first use), marked as used now."""
    current = st.session_state.get(STATE_KEY)
    if current is None:
        current = SessionFolder(upload_area(idle_minutes), _session_id())
        st.session_state[STATE_KEY] = current
    return current.use()


def own_folder() -> Optional[Path]:
    """This session's folder when it has made one (it holds the session's uploads), else None;
    never makes one."""
    current = st.session_state.get(STATE_KEY)
    return None if current is None else current.path
