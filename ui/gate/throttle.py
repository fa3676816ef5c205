"""Sign-in attempts limited per client and overall, in a sliding window.

Each attempt is counted when it arrives (not when its answer is sent), so attempts sent in
parallel are counted as they come; a right token clears its client's count. Past a limit, an
attempt is refused at once with the seconds until the window has room again (a 429 with
``Retry-After``). Behind a reverse proxy every client has the proxy's address, so the limit per
client acts as an overall one.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Optional

PER_CLIENT = 5  # wrong sign-ins a client may try per window
OVERALL = 20  # wrong sign-ins all clients together may try per window
WINDOW_S = 60.0


class SignInLimiter:
    """Admits at most ``per_client`` attempts of one client and ``overall`` attempts of all
    clients within any ``window_s`` seconds."""

    def __init__(
        self, per_client: int = PER_CLIENT, overall: int = OVERALL, window_s: float = WINDOW_S
    ) -> None:
        if per_client < 1 or overall < 1 or window_s <= 0:
            raise ValueError(
                f"limits must be positive: per_client={per_client}, overall={overall}, "
                f"window_s={window_s}"
            )
        self.per_client, self.overall, self.window_s = per_client, overall, float(window_s)
        self._attempts: deque = deque()  # (time, client), oldest first
        self._lock = threading.Lock()

    def _expire(self, now: float) -> None:
        while self._attempts and self._attempts[0][0] <= now - self.window_s:
            self._attempts.popleft()

    def admit(self, client: str, now: Optional[float] = None) -> Optional[float]:
        """None if ``client`` may try now (the attempt is counted), else the seconds to wait."""
        now = time.monotonic() if now is None else now
        with self._lock:
            self._expire(now)
            mine = [t for t, c in self._attempts if c == client]
            if len(mine) >= self.per_client:
                return mine[0] + self.window_s - now
            if len(self._attempts) >= self.overall:
                return self._attempts[0][0] + self.window_s - now
            self._attempts.append((now, client))
            return None

    def succeeded(self, client: str) -> None:
        """A right token: ``client``'s attempts no longer count."""
        with self._lock:
            self._attempts = deque(a for a in self._attempts if a[1] != client)

    def count(self, client: str, now: Optional[float] = None) -> int:
        """``client``'s attempts within the window."""
        now = time.monotonic() if now is None else now
        with self._lock:
            self._expire(now)
            return sum(1 for _, c in self._attempts if c == client)
