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

Opening and each read have time limits (``connect_timeout``, ``read_timeout``): a URL that does
not answer, or a stream that stalls, ends with one line naming it.

Only the URL's own host is checked. FFmpeg resolves it again when it connects (a name whose
address changes between the two lookups, DNS rebinding, is not caught), and the hosts it is sent
on to (an HTTP redirect, an HLS playlist's segments, within the scheme's protocols) are not
checked: where that matters, run the app behind a firewall that matches the policy.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence
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
    case-insensitive), addresses and networks; ``resolve``: the resolver ``host -> [address
    text]`` (a test stands one in; default: the system's, every address of the name)."""

    allow_hosts: Sequence[str] = ()
    connect_timeout: float = CONNECT_TIMEOUT
    read_timeout: float = READ_TIMEOUT
    resolve: Optional[Callable[[str], list]] = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not (self.connect_timeout > 0 and self.read_timeout > 0):
            raise ValueError(
                f"stream time limits must be > 0 s, got connect {self.connect_timeout}, "
                f"read {self.read_timeout}"
            )

    @classmethod
    def open_all(
        cls, connect_timeout: float = CONNECT_TIMEOUT, read_timeout: float = READ_TIMEOUT
    ) -> "StreamPolicy":
        """Every host allowed (the command line, whose user is the machine's operator); the
        schemes and time limits still hold."""
        return cls(("*",), connect_timeout, read_timeout)

    def check(self, url: str) -> tuple[str, dict]:
        """``(url, FFmpeg options)`` for a URL that passes; ValueError with one line naming the
        URL and the reason otherwise."""
        try:
            parts = urlsplit(url)
            host = parts.hostname or ""
        except ValueError as e:
            raise ValueError(f"{url}: not a URL ({e})") from None
        scheme = parts.scheme.lower()
        if scheme not in SCHEMES:
            raise ValueError(
                f"{url}: scheme {scheme + ':' if scheme else '(none)'} is not a stream scheme; "
                f"use one of {', '.join(sorted(SCHEMES))}"
            )
        if not host and scheme not in ("udp", "rtp"):
            raise ValueError(f"{url}: no host")
        self._check_host(url, host)
        return url, {"protocol_whitelist": SCHEMES[scheme]}

    def _allowed(self, host: str, addresses: list) -> bool:
        if host.lower() in (h.lower() for h in self.allow_hosts):
            return True
        nets = []
        for h in self.allow_hosts:
            try:
                nets.append(ipaddress.ip_network(h, strict=False))
            except ValueError:
                continue
        return all(
            any(x is not None and x in n for x in (a, _embedded(a)) for n in nets)
            for a in addresses
        )

    def _check_host(self, url: str, host: str) -> None:
        if "*" in self.allow_hosts:
            return
        addresses = self._addresses(url, host or "0.0.0.0")
        inner = [a for a in addresses if not _public(a)]
        if inner and not self._allowed(host, inner):
            kind = _kind(inner[0])
            raise ValueError(
                f"{url}: {host or 'a local port'} is {'an' if kind[0] in 'aeiou' else 'a'} "
                f"{kind} address ({inner[0]}); only public addresses are opened unless the "
                "operator allows this one (tsm ui --allow-stream-hosts)"
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
        if not found:
            raise ValueError(f"{url}: cannot resolve {host}: no address")
        return [ipaddress.ip_address(str(a).split("%")[0]) for a in found]


def _resolve(host: str) -> list:
    return sorted({info[4][0] for info in socket.getaddrinfo(host, None)})


_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _embedded(a) -> Optional[ipaddress.IPv4Address]:
    """The IPv4 address an IPv6 address carries (IPv4-mapped, 6to4, NAT64), else None."""
    if a.version != 6:
        return None
    if a.ipv4_mapped is not None:
        return a.ipv4_mapped
    if a.sixtofour is not None:
        return a.sixtofour
    return ipaddress.IPv4Address(int(a) & 0xFFFFFFFF) if a in _NAT64 else None


def _public(a) -> bool:
    """A unicast address of the public internet (one carrying an IPv4 address is judged by
    it: ``::ffff:127.0.0.1`` is loopback)."""
    inner = _embedded(a)
    if inner is not None:
        return _public(inner)
    return a.is_global and not (a.is_multicast or a.is_reserved or a.is_unspecified)


def _kind(a) -> str:
    a = _embedded(a) or a
    for name in ("loopback", "link_local", "multicast", "unspecified", "reserved", "private"):
        if getattr(a, f"is_{name}"):
            return name.replace("_", "-")
    return "non-public"
