"""The real-browser test: ``tsm ui`` started headless on a loopback port, driven by Playwright
in Debian's Chromium (both installed by tools/bootstrap.sh; no browser is downloaded).

The runs folder holds random-weight TSN and online-TSM detectors, a VID val snippet and tiny
dissection runs, all built with the packages' own APIs. The test selects the snippet, moves the
frame slider and checks that both model panels change and that the Plotly charts render; the
screenshots are kept beside the test's temporary folder.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from server import CHROMIUM, CHROMIUM_ARGS, running_app
from ui_fixtures import (write_detectors, write_dissection_runs, write_temporal_data,
                         write_vid_snippet)

pytestmark = pytest.mark.slow
WAIT_MS = 180_000  # the first detection pass loads two detectors on a busy 2-core machine


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("browser")
    runs = root / "runs"
    write_detectors(runs)
    write_vid_snippet(runs / "data" / "vid")
    write_dissection_runs(runs, write_temporal_data(root / "data"))
    return runs


def _panel_images(page, count: int = 2) -> list[str]:
    """The image sources once exactly ``count`` are shown: while a rerun is in flight Streamlit
    keeps the stale images in the page beside the new ones, so wait for the rerun to settle."""
    from playwright.sync_api import expect

    imgs = page.locator('[data-testid="stImage"] img')
    expect(imgs).to_have_count(count, timeout=WAIT_MS)
    return [imgs.nth(i).get_attribute("src") for i in range(imgs.count())]


def _wait_caption(page, text: str) -> None:
    page.get_by_text(text).first.wait_for(timeout=WAIT_MS)


def test_detection_and_attention_views_in_chromium(runs, tmp_path):
    assert Path(CHROMIUM).is_file(), f"{CHROMIUM} missing: tools/bootstrap.sh installs it"
    from playwright.sync_api import sync_playwright

    with running_app(runs, tmp_path / "ui.log") as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            page.goto(url)
            # Detection view (the default): the snippet is the only VID video, chosen already
            page.get_by_text("TSN (per-frame 2D baseline)").wait_for(timeout=WAIT_MS)
            page.get_by_text("TSM (online, causal shift)").wait_for(timeout=WAIT_MS)
            _wait_caption(page, "TSN frame 0/5")
            _wait_caption(page, "TSM frame 0/5")
            before = _panel_images(page)
            page.locator('[data-testid="stPlotlyChart"]').first.wait_for(timeout=WAIT_MS)
            # one key press per rerun: a press that lands while the app reruns can be lost
            for k in (1, 2, 3):
                slider = page.get_by_role("slider", name="Frame")
                slider.wait_for(timeout=WAIT_MS)
                slider.focus()
                slider.press("ArrowRight")
                _wait_caption(page, f"TSN frame {k}/5")
                _wait_caption(page, f"TSM frame {k}/5")
            after = _panel_images(page)
            assert set(after).isdisjoint(before)
            page.screenshot(path=str(tmp_path / "detection.png"), full_page=True)

            # Attention view: TSN and TSM maps side by side and the attention-mass chart
            page.get_by_text("Attention", exact=True).click()
            _wait_caption(page, "TSN frame 0/3")
            _wait_caption(page, "TSM frame 0/3")
            _panel_images(page)
            page.locator('[data-testid="stPlotlyChart"]').first.wait_for(timeout=WAIT_MS)
            page.screenshot(path=str(tmp_path / "attention.png"), full_page=True)
        finally:
            browser.close()
    log = (tmp_path / "ui.log").read_text()
    assert "Traceback" not in log, log[-3000:]
