"""A load test of the app: several browser sessions at once against one ``tsm ui`` on loopback.

Each session (its own Chromium context, so its own Streamlit session) opens the Attention view,
uploads a video and waits for both models' maps (the time to maps), then in the Live view
streams the browser's camera (Chromium's fake camera playing a clip: every session's camera)
through the online recognizers TSN and TSM for ``stream_s`` seconds, then through both
detectors for ``stream_s`` seconds. The figures of each stream are the page's latency meter
(:class:`tools.load_figures.Meter`) when it is stopped: answers computed and shown, frames
dropped, capture-to-shown latency, the batch the server stepped. Errors are exceptions, error
boxes and uncaught page errors; the server's memory is the resident size of its processes,
sampled every 0.2 s. A page is closed once its last script run is over. Used by
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

from .fake_camera import camera_args
from .headless import CHROMIUM, CHROMIUM_ARGS
from .load_figures import KINDS, Meter, log_tracebacks, percentile, report, summary

ERRORS_JS = """() => [...document.querySelectorAll(
    '[data-testid="stException"], [data-testid="stAlertContentError"]')].map(e => e.innerText)"""
METERS_JS = """() => [...document.querySelectorAll('[data-testid="stCaptionContainer"]')]
    .map(e => e.innerText).filter(t => /^received \\d+ · answered /.test(t))"""
RUNNING_JS = """() => document.querySelector('[data-testid^="stStatusWidgetRunning"]') !== null"""


@dataclass
class SessionResult:
    """One session: seconds from upload to both maps shown; for each live stream the meters
    (``{kind: {"TSN": Meter, "TSM": Meter}}``) when it was stopped; every error the page showed,
    and what the page said the decode limits did."""

    maps_s: Optional[float] = None
    meters: dict = field(default_factory=lambda: {k: {} for k in KINDS})
    batches: dict = field(default_factory=dict)  # kind -> the largest batch the meters showed
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


def _webrtc_button(page, name: str):
    return page.frame_locator("iframe").first.get_by_role("button", name=name)


async def _stream(page, seconds: float, wait_ms: int, answers: Optional[int]) -> tuple:
    """Press START, read the meters until ``seconds`` passed or each model answered
    ``answers`` frames, press STOP; ``({"TSN": Meter, "TSM": Meter} as last shown, the largest
    batch any meter showed meanwhile)``."""
    await _idle(page, wait_ms / 1000)  # a click during a run can be lost
    await _webrtc_button(page, "START").click(timeout=wait_ms)
    t0 = time.perf_counter()
    texts: list = []
    largest = 0
    while time.perf_counter() - t0 < wait_ms / 1000:
        texts = await page.evaluate(METERS_JS) or texts
        meters = [Meter.parse(t) for t in texts]
        largest = max([largest] + [m.batch for m in meters])
        ran = time.perf_counter() - t0 >= seconds
        if len(meters) == 2 and (ran or (answers and min(m.answered for m in meters) >= answers)):
            break
        await asyncio.sleep(0.2)
    await _webrtc_button(page, "STOP").click(timeout=wait_ms)
    return dict(zip(("TSN", "TSM"), (Meter.parse(t) for t in texts))), largest


async def _together(barrier: asyncio.Barrier, wait_ms: int) -> None:
    """Wait until every session reached this point (so their streams overlap), at most
    ``wait_ms``: a session that failed earlier does not hold the others."""
    try:
        await asyncio.wait_for(barrier.wait(), wait_ms / 1000)
    except (asyncio.TimeoutError, asyncio.BrokenBarrierError):
        pass


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


LIVE_HEADER = "Live: TSN and online TSM on a camera, a stream or a video"


async def _session(
    browser,
    url: str,
    upload: Path,
    stream_s: float,
    frames: Optional[int],
    wait_ms: int,
    res: SessionResult,
    barrier: asyncio.Barrier,
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
        note = page.get_by_text(re.compile(r"^The maps are of the frames ")).first
        res.limits_note = await note.inner_text() if await note.count() else ""
        # the Live view: the camera through the online recognizers, then the detectors
        await page.get_by_text("Live", exact=True).click()
        await page.get_by_text(LIVE_HEADER).wait_for(timeout=wait_ms)
        await page.get_by_text("Press START and allow the camera").wait_for(timeout=wait_ms)
        await _together(barrier, wait_ms)
        res.meters["recognizer"], res.batches["recognizer"] = await _stream(
            page, stream_s, wait_ms, frames
        )
        await _idle(page, wait_ms / 1000)
        await page.get_by_text("Detectors", exact=True).click()
        await _idle(page, wait_ms / 1000)
        await page.get_by_text("Press START and allow the camera").wait_for(timeout=wait_ms)
        await _together(barrier, wait_ms)
        res.meters["detectors"], res.batches["detectors"] = await _stream(
            page, stream_s, wait_ms, frames
        )
        await _idle(page)  # the run after Pause is over: its errors are on the page
        res.errors += await page.evaluate(ERRORS_JS)
    except Exception as e:  # a timeout or a missing element: the session failed
        res.errors.append(f"{type(e).__name__}: {str(e).splitlines()[0]}")
    finally:
        await context.close()


async def _all(
    url: str,
    upload: Path,
    camera: Path,
    sessions: int,
    stream_s: float,
    frames: Optional[int],
    wait_ms: int,
) -> list:
    from playwright.async_api import async_playwright

    results = [SessionResult() for _ in range(sessions)]
    barrier = asyncio.Barrier(sessions)
    async with async_playwright() as pw:
        args = CHROMIUM_ARGS + camera_args(camera)
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=args)
        try:
            await asyncio.gather(
                *(
                    _session(browser, url, upload, stream_s, frames, wait_ms, r, barrier)
                    for r in results
                )
            )
        finally:
            await browser.close()
    return results


def run_sessions(
    url: str,
    upload: Path,
    camera: Path,
    sessions: int = 4,
    stream_s: float = 20.0,
    frames: Optional[int] = None,
    wait_ms: int = 600_000,
) -> tuple[list, int]:
    """``sessions`` browser sessions at once against the app at ``url`` (``upload`` for the
    Attention view, ``camera`` a .y4m clip every browser's camera plays), each live stream run
    for ``stream_s`` seconds (or until each model answered ``frames`` frames); returns their
    :class:`SessionResult` and the server's peak memory (bytes)."""
    marker = f"--server.port {url.rsplit(':', 1)[1]}"
    with Peak(lambda: resident_bytes(marker)) as mem:
        results = asyncio.run(_all(url, upload, camera, sessions, stream_s, frames, wait_ms))
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
    "Meter",
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
