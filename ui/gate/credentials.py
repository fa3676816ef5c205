"""The sign-in credential: a browser-session cookie holding ``<expiry>.<nonce>.<mac>``.

``mac`` is HMAC-SHA256 of ``<expiry>.<nonce>`` under a random secret made once per server
process, compared in constant time; a credential is refused after ``expiry`` (unix seconds) and
whenever it is not plain ASCII of that form (a client controls every byte of its cookie). The
cookie has no ``Max-Age`` (it goes when the browser closes) and is ``HttpOnly``,
``SameSite=Lax`` and, over HTTPS, ``Secure``: reloads and new tabs of the same browser send it,
so the token is asked once per browser session; a server restart signs everyone out.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from typing import Optional

COOKIE = "tsm_ui_credential"
CREDENTIAL_HOURS = 12.0


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

    def expiry(self, value: Optional[str]) -> Optional[int]:
        """The expiry (unix seconds) of ``value`` if this server signed it, else None; any
        malformed value (not ASCII, not three parts, a non-numeric expiry) is None."""
        value = value or ""
        if not value.isascii():
            return None
        parts = value.split(".")
        if len(parts) != 3 or not parts[0].isdigit():
            return None
        expiry, nonce, mac = parts
        if not hmac.compare_digest(mac.encode("ascii"), self._mac(f"{expiry}.{nonce}").encode()):
            return None
        return int(expiry)

    def valid(self, value: Optional[str], now: Optional[float] = None) -> bool:
        """Whether ``value`` is a credential this server issued that has not expired."""
        expiry = self.expiry(value)
        return expiry is not None and expiry > (time.time() if now is None else now)


# the credentials of this server process: the gate signs with them and the page checks them
CREDENTIALS = Credentials()


def cookie_header(value: str, secure: bool) -> str:
    """The ``Set-Cookie`` value that hands ``value`` to the browser for its session."""
    return f"{COOKIE}={value}; Path=/; HttpOnly; SameSite=Lax" + ("; Secure" if secure else "")
