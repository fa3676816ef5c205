"""Which upload requests the server takes: Streamlit's upload route
(``PUT /_stcore/upload_file/<session id>/<file id>``) knows only the server-wide
``server.maxUploadSize``; the app records here, per session, the upload boxes it draws (each
with its own byte limit) and the uploads it accepted, and the server's gate asks
:meth:`UploadAllowance.refusal` before letting a request's body in.

A request names no box, so its byte limit is the largest limit among the boxes the session's
page drew in the last :data:`FRESH_S` seconds: one box on the page (Detection, Live) is held to
its own limit; the box itself refuses a larger file once received
(:func:`ui.app.sources.uploads.check_size`)."""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Callable, Optional

FRESH_S = 600.0
"""A box drawn this long ago still admits uploads (a page left open, then used)."""
WINDOW_S = 3600.0
"""Uploads are counted over this sliding window (an hour)."""
MULTIPART_OVERHEAD = 64 * 1024
"""Bytes a multipart body adds around the file (boundaries, headers)."""


class UploadAllowance:
    """Per session: the upload boxes drawn (key -> byte limit, count limit, when) and the
    times of the uploads accepted. Thread-safe; ``clock`` is for tests."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._boxes: dict[str, dict[str, tuple[int, int, float]]] = {}
        self._accepted: dict[str, deque] = {}
        self._lock = threading.Lock()

    def box(self, session_id: str, key: str, max_bytes: int, max_uploads: int) -> None:
        """The session's page drew upload box ``key`` taking files of at most ``max_bytes``,
        and at most ``max_uploads`` uploads an hour."""
        with self._lock:
            self._boxes.setdefault(session_id, {})[key] = (max_bytes, max_uploads, self._clock())

    def body_limit(self, session_id: str) -> Optional[int]:
        """The most bytes an upload request of the session may carry (body, multipart
        included); None when no box of its page is open."""
        with self._lock:
            open_ = self._open(session_id)
        return max(b for b, _ in open_) + MULTIPART_OVERHEAD if open_ else None

    def refusal(self, session_id: str, content_length: Optional[str]) -> Optional[str]:
        """Why the upload request of ``session_id`` with header ``Content-Length`` (None:
        absent) is refused (one line), or None: taken, and counted."""
        with self._lock:
            open_ = self._open(session_id)
            if not open_:
                return "no upload box is open on this session's page"
            length = _length(content_length)
            if length is None:
                return "an upload must state its Content-Length"
            limit = max(b for b, _ in open_) + MULTIPART_OVERHEAD
            if length > limit:
                return f"{length} bytes is over this page's upload limit of {limit} bytes"
            times, now = self._accepted.setdefault(session_id, deque()), self._clock()
            while times and now - times[0] > WINDOW_S:
                times.popleft()
            most = min(n for _, n in open_)
            if len(times) >= most:
                return f"{len(times)} uploads in the last hour; the limit is {most}"
            times.append(now)
            return None

    def forget(self, session_id: str) -> None:
        """Drop what is known of a session that ended."""
        with self._lock:
            self._boxes.pop(session_id, None)
            self._accepted.pop(session_id, None)

    def _open(self, session_id: str) -> list[tuple[int, int]]:
        now = self._clock()
        boxes = self._boxes.get(session_id, {})
        return [(b, n) for b, n, t in boxes.values() if now - t <= FRESH_S]


def _length(header: Optional[str]) -> Optional[int]:
    """A Content-Length header's value; None when absent or not a whole number >= 0."""
    text = (header or "").strip()
    return int(text) if text.isdigit() and len(text) < 19 else None


UPLOADS = UploadAllowance()
"""The server's one allowance: the app's upload boxes register here, the gate asks it."""
