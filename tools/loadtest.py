"""A load test of the app: several browser sessions at once against one ``tsm ui`` on loopback.

Each session (its own Chromium context, so its own Streamlit session) opens the Attention view,
uploads a video and waits for both models' maps (the time to maps), then in the Live view
streams the video through the online recognizer for ``stream_s`` seconds, then a video of the
runs folder through both detectors side by side for ``stream_s`` seconds. The frames shown are
counted in the browser: a MutationObserver stamps every new frame of the stream's status line
the moment the page shows it, so frames/s is the rate the user sees; the models' own time a
frame is the median the same line gives (the models alone, drawing left out). Errors are
exceptions, error boxes and uncaught page errors; the server's memory is the resident size of
its processes, sampled every 0.2 s. A page is closed once its last script run is over. Used by
``benchmarks/load_app.py`` (the full run) and the test suite (reduced).
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from .headless import CHROMIUM, CHROMIUM_ARGS
from .load_figures import KINDS, Shown, log_tracebacks, percentile, report, summary

STATUS = re.compile(r"^(playing|paused|finished): frame (\d+)/(\d+)")
STATUS_JS = """() => [...document.querySelectorAll('[data-testid="stCaptionContainer"]')]
    .map(e => e.innerText).filter(t => /^(playing|paused|finished): frame/.test(t))"""
ERRORS_JS = """() => [...document.querySelectorAll(
    '[data-testid="stException"], [data-testid="stAlertContentError"]')].map(e => e.innerText)"""
OBSERVE_JS = """() => { window.__frames = []; let last = null;
  const read = () => { for (const e of document.querySelectorAll(
      '[data-testid="stCaptionContainer"]')) {
    const m = /^(playing|paused|finished): frame (\\d+)\\//.exec(e.innerText);
    if (m && m[1] !== 'paused' && m[2] !== last) {
      last = m[2]; window.__frames.push([performance.now(), +m[2], e.innerText]); } } };
  if (window.__observer) window.__observer.disconnect();
  window.__observer = new MutationObserver(read);
  window.__observer.observe(document.body, {subtree: true, childList: true,
                                            characterData: true});
  read(); }"""
FRAMES_JS = "() => window.__frames"
RUNNING_JS = """() => document.querySelector('[data-testid^="stStatusWidgetRunning"]') !== null"""


@dataclass
class SessionResult:
    """One session: seconds from upload to both maps shown; for each live stream the frame
    intervals (ms) and frames per second as the page showed them, the frames shown and the
    models' median time a frame (ms, the page's status line); every error the page showed, and
    what the page said the decode limits did."""

    maps_s: Optional[float] = None
    intervals_ms: dict = field(default_factory=lambda: {k: [] for k in KINDS})
    frames: dict = field(default_factory=dict)
    fps: dict = field(default_factory=dict)
    model_ms: dict = field(default_factory=dict)
    errors: list = field(default_factory=list)
    limits_note: str = ""


def resident_bytes(marker: str) -> int:
    """Resident bytes now of the processes whose command line holds ``marker`` (Linux
    ``/proc``)."""
    total = 0
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            if marker not in cmdline:
                continue
            rss = next(
                line
                for line in (proc / "status").read_text().splitlines()
                if line.startswith("VmRSS:")
            )
        except (OSError, StopIteration, UnicodeDecodeError):
            continue  # gone meanwhile, or a kernel thread
        total += int(rss.split()[1]) * 1024
    return total


class Peak:
    """The largest value ``sample()`` returns while the block runs (sampled in a thread every
    ``every_s`` seconds)."""

    def __init__(self, sample: Callable[[], float], every_s: float = 0.2) -> None:
        self.sample, self.every_s, self.peak = sample, every_s, 0
        self._stop = threading.Event()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.sample())
            self._stop.wait(self.every_s)

    def __enter__(self) -> "Peak":
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.sample())


async def _status(page) -> Optional[tuple]:
    texts = await page.evaluate(STATUS_JS)
    m = STATUS.match(texts[0]) if texts else None
    return (m.group(1), int(m.group(2)), int(m.group(3))) if m else None


async def _stream(page, seconds: float, wait_ms: int, frames: Optional[int]) -> Shown:
    """Press ▶ Stream, watch the frames the page shows until ``seconds`` passed, ``frames``
    frames were shown (at least two) or the stream finished, pause; the frames shown."""
    await _idle(page, wait_ms / 1000)  # a click during a run can be lost
    await page.evaluate(OBSERVE_JS)
    await page.get_by_role("button", name="▶ Stream").click(timeout=wait_ms)
    t_end = time.perf_counter() + seconds
    while time.perf_counter() < t_end:
        st = await _status(page)
        shown = await page.evaluate(FRAMES_JS)
        if st and (st[0] == "finished" or (frames and len(shown) >= max(frames, 2))):
            break
        await asyncio.sleep(0.1)
    await _pause(page, min(wait_ms / 1000, 60.0))
    return Shown([tuple(f) for f in await page.evaluate(FRAMES_JS)])


async def _pause(page, seconds: float) -> None:
    """Press Pause until the status line says the stream is not playing: a rerun can hide the
    line or the button for a moment, and a click can land before the player reads it."""
    t_end = time.perf_counter() + seconds
    while time.perf_counter() < t_end:
        st = await _status(page)
        if st and st[0] != "playing":
            return
        button = page.get_by_role("button", name="Pause")
        if st and await button.count():
            try:
                await button.click(timeout=2000)
            except Exception:  # the button was redrawn under the click: read the status again
                pass
        await asyncio.sleep(0.3)


async def _idle(page, seconds: float = 30.0, quiet_s: float = 1.0) -> None:
    """Wait until the page's script run is over (no running icon in Streamlit's status widget
    for ``quiet_s``), so that closing the page does not cut a run that is still sending."""
    quiet_since, t_end = None, time.perf_counter() + seconds
    while time.perf_counter() < t_end:
        running = await page.evaluate(RUNNING_JS)
        now = time.perf_counter()
        quiet_since = None if running else (quiet_since or now)
        if quiet_since is not None and now - quiet_since >= quiet_s:
            return
        await asyncio.sleep(0.1)


DETECTORS = "Both detectors side by side"
LIVE_HEADER = "Live: models fed the video frame by frame"


def _record(res: SessionResult, kind: str, shown: Shown) -> None:
    res.intervals_ms[kind], res.frames[kind] = shown.intervals_ms(), shown.count
    res.fps[kind], res.model_ms[kind] = shown.fps(), shown.model_ms()


async def _session(
    browser,
    url: str,
    upload: Path,
    stream_s: float,
    frames: Optional[int],
    wait_ms: int,
    res: SessionResult,
) -> None:
    context = await browser.new_context(viewport={"width": 1400, "height": 1100})
    page = await context.new_page()
    page.on("pageerror", lambda e: res.errors.append(f"page error: {e}"))
    try:
        await page.goto(url)
        await page.get_by_text("Detection: TSN vs online TSM").wait_for(timeout=wait_ms)
        await page.get_by_text("Attention", exact=True).click()
        await page.get_by_text("Any two checkpoints on any video", exact=True).click()
        await page.get_by_text("Upload a video").click(timeout=wait_ms)
        file_input = page.locator('input[type="file"]')
        await file_input.wait_for(state="attached", timeout=wait_ms)
        t0 = time.perf_counter()
        await file_input.set_input_files(str(upload))
        for slot in "AB":
            await page.get_by_text(re.compile(rf"^{slot} frame 0/\d+ ")).wait_for(timeout=wait_ms)
        res.maps_s = time.perf_counter() - t0
        note = page.get_by_text(re.compile(r"^Sampled from ")).first
        res.limits_note = await note.inner_text() if await note.count() else ""
        # the Live view: the upload through the online recognizer (the page drops the runs
        # folder's video, asks for a file, then offers the upload's stream)
        await page.get_by_text("Live", exact=True).click()
        await page.get_by_text(LIVE_HEADER).wait_for(timeout=wait_ms)
        await _idle(page, wait_ms / 1000)  # the previous page's controls are gone
        await page.get_by_text("Upload a video").click(timeout=wait_ms)
        await page.get_by_text("Choose a video file to upload.").wait_for(timeout=wait_ms)
        await page.locator('input[type="file"]').set_input_files(str(upload))
        await page.get_by_text(re.compile("through the online model")).wait_for(timeout=wait_ms)
        _record(res, "recognizer", await _stream(page, stream_s, wait_ms, frames))
        # then the runs folder's video (bikes.mp4, 640x272) through both detectors
        await page.get_by_text(DETECTORS, exact=True).click()
        await _idle(page, wait_ms / 1000)
        await page.get_by_text("Video in the runs folder").click(timeout=wait_ms)
        await page.get_by_text(re.compile(r"^Streaming .* at 640x272")).wait_for(timeout=wait_ms)
        await page.get_by_text(re.compile("through both detectors")).wait_for(timeout=wait_ms)
        _record(res, "detectors", await _stream(page, stream_s, wait_ms, frames))
        await _idle(page)  # the run after Pause is over: its errors are on the page
        res.errors += await page.evaluate(ERRORS_JS)
    except Exception as e:  # a timeout or a missing element: the session failed
        res.errors.append(f"{type(e).__name__}: {str(e).splitlines()[0]}")
    finally:
        await context.close()


async def _all(
    url: str, upload: Path, sessions: int, stream_s: float, frames: Optional[int], wait_ms: int
) -> list:
    from playwright.async_api import async_playwright

    results = [SessionResult() for _ in range(sessions)]
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            await asyncio.gather(
                *(_session(browser, url, upload, stream_s, frames, wait_ms, r) for r in results)
            )
        finally:
            await browser.close()
    return results


def run_sessions(
    url: str,
    upload: Path,
    sessions: int = 4,
    stream_s: float = 20.0,
    frames: Optional[int] = None,
    wait_ms: int = 600_000,
) -> tuple[list, int]:
    """``sessions`` browser sessions at once against the app at ``url``, each stream played
    for ``stream_s`` seconds (or until ``frames`` frames were shown); returns their
    :class:`SessionResult` and the server's peak memory (bytes)."""
    marker = f"--server.port {url.rsplit(':', 1)[1]}"
    with Peak(lambda: resident_bytes(marker)) as mem:
        results = asyncio.run(_all(url, upload, sessions, stream_s, frames, wait_ms))
    return results, mem.peak


def session_folders(tmpdir: Path) -> list[Path]:
    """The session folders left in the upload areas under ``tmpdir`` (the server's TMPDIR)."""
    return sorted(Path(tmpdir).glob("tsm_ui_uploads_*/session_*"))


def wait_until(check, timeout_s: float, every_s: float = 0.5) -> bool:
    """Poll ``check()`` until it is true or ``timeout_s`` passed; its last answer."""
    deadline = time.monotonic() + timeout_s
    while not (ok := check()) and time.monotonic() < deadline:
        time.sleep(every_s)
    return bool(ok)


__all__ = [
    "SessionResult",
    "Shown",
    "Peak",
    "resident_bytes",
    "run_sessions",
    "summary",
    "report",
    "percentile",
    "log_tracebacks",
    "session_folders",
    "wait_until",
]
