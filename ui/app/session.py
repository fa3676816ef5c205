"""Each browser session's private temporary folder, always cleaned up.

The server makes one upload area (a private ``mkdtemp`` folder, removed when the server exits);
each session gets its own folder in it on first use (uploaded checkpoints are kept there so the
models can be loaded from a path). The folder is removed when the session ends (Streamlit drops
the session's state some time after its page is closed, and the folder's finalizer runs), when
it has been idle for ``idle_minutes`` (a background sweep), or by :meth:`SessionFolder.remove`.
A removed folder is made again, empty, on the session's next use.
"""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
import time
import weakref
from pathlib import Path
from typing import Optional

import streamlit as st

PREFIX = "tsm_ui_uploads_"
SWEEP_EVERY_S = 60.0
STATE_KEY = "_session_folder"


class SessionFolder:
    """A private folder ``<area>/session_<random>`` for one session; removed by
    :meth:`remove`, on garbage collection of this object, or at interpreter exit. Usable as a
    context manager (removed on exit)."""

    def __init__(self, area: Path) -> None:
        self.path = Path(tempfile.mkdtemp(prefix="session_", dir=area))
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


def sweep_idle(area: Path, idle_s: float, now: Optional[float] = None) -> list[Path]:
    """Remove the session folders of ``area`` not used for ``idle_s`` seconds; returns them."""
    now = time.time() if now is None else now
    removed = []
    for folder in sorted(Path(area).glob("session_*")):
        try:
            idle = now - folder.stat().st_mtime
        except FileNotFoundError:
            continue
        if idle > idle_s:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


@st.cache_resource(show_spinner=False)
def upload_area(idle_minutes: float) -> Path:
    """The server's upload area (one per process), removed at exit, swept every minute."""
    area = Path(tempfile.mkdtemp(prefix=PREFIX))
    atexit.register(shutil.rmtree, str(area), True)

    def sweep() -> None:
        while area.is_dir():
            sweep_idle(area, idle_minutes * 60)
            time.sleep(SWEEP_EVERY_S)
    threading.Thread(target=sweep, name="tsm-ui-sweep", daemon=True).start()
    return area


def folder(idle_minutes: float) -> Path:
    """This session's folder (made on first use), marked as used now."""
    current = st.session_state.get(STATE_KEY)
    if current is None:
        current = st.session_state[STATE_KEY] = SessionFolder(upload_area(idle_minutes))
    return current.use()
