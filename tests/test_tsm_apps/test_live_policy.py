"""The stream policy: only stream schemes, each with its FFmpeg protocols; loopback, private,
link-local, multicast, reserved and unspecified addresses refused unless allowed (by name,
address, network or ``*``); names judged by every address they resolve to; and, through FFmpeg
itself, an HTTP server that redirects to ``file:`` yields a refusal, never bytes, and one that
redirects to a protocol outside the scheme's list is not followed."""

from __future__ import annotations

import http.server
import socket
import threading
from contextlib import contextmanager
from pathlib import Path

import av
import pytest

from tests.test_tsm_apps.test_live_sources import http_server, read_all
from tsm_apps.live.policy import SCHEMES, StreamPolicy
from tsm_apps.live.sources import open_source

HINT = "only public addresses are opened unless the operator allows this one " + (
    "(tsm ui --allow-stream-hosts)"
)
SCHEME_LIST = "http, https, rtmp, rtmps, rtp, rtsp, rtsps, srt, udp"


@pytest.mark.parametrize(
    "url, scheme",
    [
        ("file:///etc/passwd", "file:"),
        ("concat:/etc/passwd|/etc/hosts", "concat:"),
        ("subfile:,start,0,end,64,:/etc/passwd", "subfile:"),
        ("data:video/mp2t;base64,R0VU", "data:"),
        ("pipe:0", "pipe:"),
        ("ftp://example.com/a.ts", "ftp:"),
        ("/etc/passwd", "(none)"),
        ("clip.mp4", "(none)"),
    ],
)
def test_schemes_other_than_stream_schemes_are_refused(url, scheme):
    with pytest.raises(ValueError) as e:
        StreamPolicy.open_all().check(url)  # even with every host allowed
    assert (
        str(e.value) == f"{url}: scheme {scheme} is not a stream scheme; use one of {SCHEME_LIST}"
    )


def test_each_scheme_tells_ffmpeg_its_own_protocols_only():
    p = StreamPolicy.open_all()
    assert p.check("http://8.8.8.8/a.m3u8") == (
        "http://8.8.8.8/a.m3u8",
        {"protocol_whitelist": "http,tcp,hls"},
    )
    assert p.check("udp://8.8.8.8:5000")[1] == {"protocol_whitelist": "udp"}
    assert p.check("rtsp://8.8.8.8/cam")[1] == {"protocol_whitelist": "rtsp,rtp,srtp,udp,tcp"}
    assert p.check("HTTPS://8.8.8.8/x")[1] == {"protocol_whitelist": "https,http,tls,tcp,hls"}
    for scheme, allowed in SCHEMES.items():
        protocols = set(allowed.split(","))
        assert scheme in protocols
        assert not protocols & {"file", "concat", "subfile", "data", "pipe", "fd", "cache"}


@pytest.mark.parametrize(
    "url, host, kind, address",
    [
        ("http://127.0.0.1/live", "127.0.0.1", "loopback", "127.0.0.1"),
        ("rtsp://10.1.2.3/cam", "10.1.2.3", "private", "10.1.2.3"),
        ("http://192.168.1.1:8080/a.ts", "192.168.1.1", "private", "192.168.1.1"),
        ("http://169.254.169.254/latest", "169.254.169.254", "link-local", "169.254.169.254"),
        ("udp://239.1.2.3:5000", "239.1.2.3", "multicast", "239.1.2.3"),
        ("http://0.0.0.0/", "0.0.0.0", "unspecified", "0.0.0.0"),
        ("udp://@:5000", "a local port", "unspecified", "0.0.0.0"),
        ("http://240.0.0.1/", "240.0.0.1", "reserved", "240.0.0.1"),
        ("http://100.64.0.1/", "100.64.0.1", "non-public", "100.64.0.1"),
        ("http://[::1]:8000/", "::1", "loopback", "::1"),
        ("http://[fe80::1%25eth0]/", "fe80::1%25eth0", "link-local", "fe80::1"),
        ("http://[fc00::1]/", "fc00::1", "private", "fc00::1"),
        ("udp://[ff02::1]:5000", "ff02::1", "multicast", "ff02::1"),
        ("http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1", "loopback", "::ffff:7f00:1"),
        ("http://[64:ff9b::a00:1]/", "64:ff9b::a00:1", "private", "64:ff9b::a00:1"),
    ],
)
def test_inner_addresses_are_refused_by_default(url, host, kind, address):
    article = "an" if kind[0] in "aeiou" else "a"
    with pytest.raises(ValueError) as e:
        StreamPolicy(resolve=_never).check(url)
    assert str(e.value) == f"{url}: {host} is {article} {kind} address ({address}); {HINT}"


def _never(host):
    raise AssertionError(f"{host} must not be resolved")


def _names(table):
    def resolve(host):
        if host not in table:
            raise OSError(-2, "Name or service not known")
        return table[host]

    return resolve


def test_public_addresses_pass_and_the_operator_allows_names_addresses_and_networks():
    dns = _names(
        {
            "cam.local": ["192.168.1.20"],
            "rebound.example": ["127.0.0.1"],
            "mixed.example": ["8.8.8.8", "10.0.0.7"],
            "split.example": ["10.0.0.5", "192.168.0.5"],
            "public.example": ["8.8.8.8", "2001:4860:4860::8888"],
            "nothing.example": [],
        }
    )
    url = "rtsp://{}/stream"
    default = StreamPolicy(resolve=dns)
    for host in ("8.8.8.8", "[2001:4860:4860::8888]", "public.example"):
        assert default.check(url.format(host))[0] == url.format(host)
    for host, kind, address in (
        ("rebound.example", "loopback", "127.0.0.1"),  # a name is judged by its addresses
        ("mixed.example", "private", "10.0.0.7"),  # every one of them
        ("cam.local", "private", "192.168.1.20"),
    ):
        with pytest.raises(ValueError, match=rf"is a {kind} address \({address}\)"):
            default.check(url.format(host))
    with pytest.raises(ValueError) as e:
        default.check(url.format("unknown.example"))
    assert str(e.value) == (
        "rtsp://unknown.example/stream: cannot resolve unknown.example: Name or service not known"
    )
    with pytest.raises(ValueError, match="cannot resolve nothing.example: no address"):
        default.check(url.format("nothing.example"))

    allowed = StreamPolicy(("CAM.local", "127.0.0.1", "10.0.0.0/8"), resolve=dns)
    for host in ("cam.local", "127.0.0.1", "10.200.3.4", "rebound.example", "mixed.example"):
        assert allowed.check(url.format(host))[0] == url.format(host)
    for host in ("192.168.0.5", "127.0.0.2", "split.example"):  # 192.168.0.5 is in no network
        with pytest.raises(ValueError, match="only public addresses"):
            allowed.check(url.format(host))
    anything = StreamPolicy(("*",), resolve=_never)  # nothing resolved, nothing refused
    for host in ("127.0.0.1", "[::1]", "cam.local", "239.1.2.3"):
        assert anything.check(url.format(host))[0] == url.format(host)
    assert StreamPolicy.open_all(2.0, 0.5) == StreamPolicy(("*",), 2.0, 0.5)
    with pytest.raises(ValueError, match="time limits must be > 0 s"):
        StreamPolicy(read_timeout=0)


@contextmanager
def tcp_listener():
    """A TCP port on 127.0.0.1 that accepts and counts connections (yields ``(port, hits)``)."""
    sock = socket.create_server(("127.0.0.1", 0))
    hits = []

    def accept() -> None:
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            hits.append(conn.recv(16))
            conn.close()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield sock.getsockname()[1], hits
    finally:
        sock.close()


def redirects(table: dict):
    class Redirects(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(302)
            self.send_header("Location", table[self.path])
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    return Redirects


def test_a_redirect_to_file_or_another_protocol_is_refused_and_never_returns_bytes():
    """``/passwd`` redirects to ``file:///etc/passwd``, ``/tls`` to ``https://`` on a port that
    counts connections (https is in FFmpeg's own list for HTTP, not in the policy's)."""
    policy = StreamPolicy.open_all(connect_timeout=3.0, read_timeout=1.0)
    secret = Path("/etc/passwd").read_text()[:16]
    with tcp_listener() as (port, hits):
        table = {"/passwd": "file:///etc/passwd", "/tls": f"https://127.0.0.1:{port}/x"}
        with http_server(redirects(table)) as base:
            with pytest.raises(ValueError, match="is a loopback address"):
                StreamPolicy().check(f"{base}/passwd")  # by default not even asked
            for path in table:
                frames, error = read_all(open_source(base + path, policy))
                assert frames == [] and error.startswith(f"{base}{path}: cannot open: ")
                assert secret not in error
            assert hits == []  # the redirect to https was not followed
            # the control: without the policy's whitelist FFmpeg follows it (a TLS hello)
            with pytest.raises(av.FFmpegError):
                av.open(f"{base}/tls", timeout=(3.0, 1.0))
            assert len(hits) == 1 and hits[0][:1] == b"\x16"
