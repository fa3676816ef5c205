"""Take the README's picture of the app: ``python tools/app_screenshot.py --runs runs/demo``.

Starts ``tsm ui`` on a free loopback port, opens the Attention view (TSN and TSM maps of the
first clip of the demo's dissection runs) in Debian's headless Chromium through Playwright and
writes a PNG (default docs/app.png). The UI process is always stopped.
"""
from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(url: str, proc: subprocess.Popen, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"tsm ui exited with code {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.read().strip() == b"ok":
                    return
        except OSError:
            time.sleep(0.5)
    raise TimeoutError(f"tsm ui did not answer at {url}")


def shoot(runs: Path, out: Path, view: str, settle_s: float) -> Path:
    from playwright.sync_api import sync_playwright

    port = _port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([sys.executable, "-m", "tsm_apps.cli", "ui", "--runs", str(runs),
                             "--port", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        _wait(url, proc)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(url)
            page.get_by_text(view, exact=True).first.click()
            page.wait_for_selector("img", timeout=120_000)
            time.sleep(settle_s)  # let the page finish its rerun
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out), full_page=False)
            browser.close()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=15)
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=Path, default=Path("runs/demo"))
    p.add_argument("--out", type=Path, default=Path("docs/app.png"))
    p.add_argument("--view", default="Attention", help="sidebar view to show")
    p.add_argument("--settle", type=float, default=8.0, help="seconds to wait after the images")
    a = p.parse_args()
    if not a.runs.is_dir():
        print(f"{a.runs}: not a folder (run make demo first)", file=sys.stderr)
        return 2
    print(shoot(a.runs, a.out, a.view, a.settle))
    return 0


if __name__ == "__main__":
    sys.exit(main())
