"""``tsm ui`` headless on a free loopback port, for browser tests, benchmarks and screenshots:
started, waited for until healthy, and always stopped (the whole process group)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

HOST = "127.0.0.1"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # pages of a headless browser count as hidden: without these, their timers
    # (the app's timed fragment runs) fire at most once a second
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float) -> None:
    """Block until Streamlit's health endpoint at ``url`` answers ``ok``; errors if ``proc`` exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"tsm ui exited with code {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.read().strip() == b"ok":
                    return
        except OSError:
            pass
        time.sleep(0.3)  # not up yet, or not healthy yet: ask again shortly
    raise TimeoutError(f"tsm ui did not answer at {url} within {timeout:.0f} s")


@contextmanager
def running_app(
    runs: Path, log: Path | None = None, timeout: float = 90.0, args: tuple = (), **env: str
) -> Iterator[str]:
    """``tsm ui --runs RUNS [args]`` on a free port; yields its URL. Output goes to ``log``
    (discarded when ``None``). ``tsm`` is this interpreter's console script."""
    port = free_port()
    cmd = [
        str(Path(sys.executable).with_name("tsm")),
        "ui",
        "--runs",
        str(runs),
        "--port",
        str(port),
        "--host",
        HOST,
        *map(str, args),
    ]
    with open(log if log is not None else os.devnull, "wb") as out:
        proc = subprocess.Popen(
            cmd,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, **env},
            start_new_session=True,
        )
        try:
            url = f"http://{HOST}:{port}"
            wait_healthy(url, proc, timeout)
            yield url
        finally:
            stop_group(proc)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


def stop_group(proc: subprocess.Popen, timeout: float = 15.0) -> None:
    """SIGTERM to the process group ``proc`` leads (``tsm ui`` and the Streamlit server it
    started), then SIGKILL to whatever of it is left after ``timeout`` seconds; returns when
    the whole group is gone, so no server outlives its caller."""
    if _group_alive(proc.pid):
        os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _group_alive(proc.pid) and time.monotonic() < deadline:
        proc.poll()  # reap the leader so that it does not linger as a zombie
        time.sleep(0.1)
    if _group_alive(proc.pid):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
