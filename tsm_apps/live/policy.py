"""Which network streams a process may be asked to open, and how long it waits for them.

A URL typed into the app makes the SERVER open it, so a URL passes only if:

* its scheme is a stream scheme (:data:`SCHEMES`); FFmpeg is told to use only that scheme's
  protocols (``protocol_whitelist``), so nothing it opens on the way (an HLS playlist's
  segments, an HTTP redirect) can reach ``file:``, ``concat:``, ``subfile:``, ``data:``,
  ``pipe:`` or any other protocol;
* every address its host resolves to is public, or lies in what the operator allows
  (``allow_hosts``: host names, addresses or networks such as ``10.0.0.0/8``; ``*`` allows all).
  Loopback, private, link-local, multicast, reserved and unspecified addresses are refused by
  default (a server must not be a way into its own network).

Connecting and each read have time limits (``timeout``): a URL that does not answer, or a stream
that stalls, ends with one line naming it. The host is resolved again by FFmpeg when it
connects; a name whose address changes between the two lookups (DNS rebinding) is not caught:
run the app behind a firewall that matches the policy where that matters.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass, field
from typing import Callable, Sequence
from urllib.parse import urlsplit

SCHEMES = {
    "rtsp": "rtsp,rtp,srtp,udp,tcp",
    "rtsps": "rtsp,rtsps,rtp,srtp,udp,tcp,tls",
    "http": "http,tcp,hls",
    "https": "https,http,tls,tcp,hls",
    "udp": "udp",
    "rtp": "rtp,udp",
    "srt": "srt",
    "rtmp": "rtmp,tcp",
    "rtmps": "rtmps,rtmp,tls,tcp",
}
"""Stream schemes and the FFmpeg protocols each may use (its ``protocol_whitelist``)."""

CONNECT_TIMEOUT = 10.0  # s to open a stream
READ_TIMEOUT = 5.0  # s without data before a stream counts as stalled


@dataclass(frozen=True)
class StreamPolicy:
    """What may be opened (module docstring). ``allow_hosts``: ``*``, host names (exact,
    case-insensitive), addresses and networks; ``resolve``: the resolver (a test stands one in)."""

    allow_hosts: Sequence[str] = ()
    connect_timeout: float = CONNECT_TIMEOUT
    read_timeout: float = READ_TIMEOUT
    resolve: Callable[[str], list] = field(default=None, compare=False, repr=False)

    @classmethod
    def open_all(cls) -> "StreamPolicy":
        """Every host allowed (the command line, whose user is the machine's operator); the
        schemes and time limits still hold."""
        return cls(allow_hosts=("*",))

    def check(self, url: str) -> tuple[str, dict]:
        """``(url, FFmpeg options)`` for a URL that passes; ValueError with one line naming the
        URL and the reason otherwise."""
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in SCHEMES:
            raise ValueError(
                f"{url}: scheme {scheme + ':' if scheme else '(none)'} is not a stream scheme; "
                f"use one of {', '.join(sorted(SCHEMES))}"
            )
        host = parts.hostname or ""
        if not host and scheme not in ("udp", "rtp"):
            raise ValueError(f"{url}: no host")
        self._check_host(url, host)
        return url, {"protocol_whitelist": SCHEMES[scheme]}

    def _allowed(self, host: str, addresses: list) -> bool:
        if "*" in self.allow_hosts or host.lower() in (h.lower() for h in self.allow_hosts):
            return True
        nets = []
        for h in self.allow_hosts:
            try:
                nets.append(ipaddress.ip_network(h, strict=False))
            except ValueError:
                continue
        return all(any(a in n for n in nets) for a in addresses)

    def _check_host(self, url: str, host: str) -> None:
        if "*" in self.allow_hosts:
            return
        addresses = self._addresses(url, host or "0.0.0.0")
        inner = [a for a in addresses if not a.is_global]
        if inner and not self._allowed(host, inner):
            raise ValueError(
                f"{url}: {host or 'a local port'} is a {_kind(inner[0])} address ({inner[0]}); "
                "the server opens only public addresses unless its operator allows this one "
                "(tsm ui --allow-stream-hosts)"
            )

    def _addresses(self, url: str, host: str) -> list:
        try:
            return [ipaddress.ip_address(host.split("%")[0])]
        except ValueError:
            pass
        try:
            found = (self.resolve or _resolve)(host)
        except OSError as e:
            raise ValueError(f"{url}: cannot resolve {host}: {e.strerror or e}") from None
        return [ipaddress.ip_address(a.split("%")[0]) for a in found]


def _resolve(host: str) -> list:
    return sorted({info[4][0] for info in socket.getaddrinfo(host, None)})


def _kind(a) -> str:
    for name in ("loopback", "link_local", "private", "multicast", "unspecified", "reserved"):
        if getattr(a, f"is_{name}"):
            return name.replace("_", "-")
    return "non-public"
