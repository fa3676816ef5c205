"""Take the README's picture of the app: ``python tools/app_screenshot.py --runs runs/demo``.

Starts ``tsm ui`` on a free loopback port, opens the Attention view (TSN and TSM maps of the
first clip of the demo's dissection runs) in Debian's headless Chromium through Playwright and
writes a PNG (default docs/app.png). The UI process is always stopped. ``--click TEXT`` clicks
the texts given in turn (a mode, a source); ``--view Live --camera CLIP`` gives the browser a
fake camera playing CLIP (a video file, written as Y4M), presses START and takes the page once
the models have answered for a few seconds; ``--width`` and ``--height`` set the window's size
(the app scrolls inside its window, so a long page needs a tall one).

    python tools/app_screenshot.py --runs RUNS --view Runs --width 1280 --height 2600 \
        --out docs/app_runs_1280.png
    python tools/app_screenshot.py --runs RUNS --view Live --camera clip.mp4 --height 1100 \
        --out docs/app_live.png
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path


def shoot(
    runs: Path,
    out: Path,
    view: str,
    settle_s: float,
    width: int = 1400,
    clicks: tuple = (),
    camera: Path | None = None,
    full_page: bool = False,
    height: int = 900,
) -> Path:
    import tempfile

    from playwright.sync_api import sync_playwright

    from tools.fake_camera import camera_args, write_y4m
    from tools.headless import CHROMIUM, CHROMIUM_ARGS, running_app
    from tsm_apps.data.video import read_video_frames

    args = list(CHROMIUM_ARGS)
    tmp = tempfile.TemporaryDirectory()
    if camera is not None:
        clip = read_video_frames(camera, range(100))
        clip = clip[:, : clip.shape[1] // 2 * 2, : clip.shape[2] // 2 * 2]
        args += camera_args(write_y4m(clip, Path(tmp.name) / "camera.y4m"))
    with tmp, running_app(runs, timeout=120.0) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=args)
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(url)
        page.get_by_text(view, exact=True).first.click()
        for text in clicks:
            time.sleep(settle_s / 2)  # the rerun of the previous click draws the next control
            page.get_by_text(text, exact=True).first.click(timeout=120_000)
        if camera is not None:
            time.sleep(settle_s / 2)
            start = page.frame_locator("iframe").first.get_by_role("button", name="START")
            start.click(timeout=300_000)
            page.get_by_text(re.compile(r"answered \d+ \(")).first.wait_for(timeout=300_000)
        else:
            page.wait_for_selector("img, .js-plotly-plot", timeout=120_000)  # a picture or a chart
        time.sleep(settle_s)  # let the page finish its rerun (or play a few seconds)
        out.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(out), full_page=full_page)
        browser.close()
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=Path, default=Path("runs/demo"))
    p.add_argument("--out", type=Path, default=Path("docs/app.png"))
    p.add_argument("--view", default="Attention", help="sidebar view to show")
    p.add_argument("--settle", type=float, default=8.0, help="seconds to wait after the images")
    p.add_argument("--width", type=int, default=1400, help="window width in pixels")
    p.add_argument(
        "--height",
        type=int,
        default=900,
        help="window height in pixels (the app "
        "scrolls inside the window: a taller window shows more of a long page)",
    )
    p.add_argument(
        "--click",
        action="append",
        default=[],
        metavar="TEXT",
        help="text to click after opening the view (repeatable, in order)",
    )
    p.add_argument(
        "--camera",
        type=Path,
        help="Live view: a video the browser's fake camera plays; START is pressed",
    )
    p.add_argument("--full-page", action="store_true", help="the whole page, not the window")
    a = p.parse_args()
    if not a.runs.is_dir():
        print(f"{a.runs}: not a folder (run make demo first)", file=sys.stderr)
        return 2
    print(
        shoot(
            a.runs,
            a.out,
            a.view,
            a.settle,
            a.width,
            tuple(a.click),
            a.camera,
            a.full_page,
            a.height,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
