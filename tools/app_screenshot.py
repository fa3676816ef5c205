"""Take the README's picture of the app: ``python tools/app_screenshot.py --runs runs/demo``.

Starts ``tsm ui`` on a free loopback port, opens the Attention view (TSN and TSM maps of the
first clip of the demo's dissection runs) in Debian's headless Chromium through Playwright and
writes a PNG (default docs/app.png). The UI process is always stopped.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def shoot(runs: Path, out: Path, view: str, settle_s: float) -> Path:
    from playwright.sync_api import sync_playwright

    from ui.headless import CHROMIUM, CHROMIUM_ARGS, running_app

    with running_app(runs, timeout=120.0) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(url)
        page.get_by_text(view, exact=True).first.click()
        page.wait_for_selector("img", timeout=120_000)
        time.sleep(settle_s)  # let the page finish its rerun
        out.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(out), full_page=False)
        browser.close()
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
