"""A load test of the app: several browser sessions at once against one ``tsm ui`` on loopback.

Each session (its own Chromium context, so its own Streamlit session) opens the Attention view,
uploads a video and waits for both models' maps (the time to maps), streams the video through
the online recognizer for ``stream_s`` seconds, then streams a video of the runs folder through
both detectors for ``stream_s`` seconds. The per-frame latency is the wall time between frames
as the page shows them (the status line, read every 50 ms). Errors are exceptions, error boxes
and uncaught page errors; the server's memory is the resident size of its processes, sampled
every 0.2 s. A page is closed once its last script run is over. Used by
``benchmarks/load_app.py`` (the full run) and the test suite (reduced).
"""
from __future__ import annotations

import asyncio
import re
import statistics
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from .headless import CHROMIUM, CHROMIUM_ARGS

STATUS = re.compile(r"^(playing|paused|finished): frame (\d+)/(\d+)")
STATUS_JS = """() => [...document.querySelectorAll('[data-testid="stCaptionContainer"]')]
    .map(e => e.innerText).filter(t => /^(playing|paused|finished): frame/.test(t))"""
ERRORS_JS = """() => [...document.querySelectorAll(
    '[data-testid="stException"], [data-testid="stAlertContentError"]')].map(e => e.innerText)"""
RUNNING_JS = """() => document.querySelector('[data-testid^="stStatusWidgetRunning"]') !== null"""


@dataclass
class SessionResult:
    """One session: seconds from upload to both maps shown, frame intervals (ms) seen in each
    live stream, every error the page showed, and what the page said the decode limits did."""
    maps_s: Optional[float] = None
    intervals_ms: dict = field(default_factory=lambda: {"recognizer": [], "detectors": []})
    frames: dict = field(default_factory=dict)
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
            rss = next(line for line in (proc / "status").read_text().splitlines()
                       if line.startswith("VmRSS:"))
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


async def _stream(page, seconds: float, wait_ms: int, frames: Optional[int]) -> tuple[list, int]:
    """Press ▶ Stream, read the status line until ``seconds`` passed, ``frames`` frames were
    shown (and at least two of them read) or the stream finished, pause; returns the per-frame
    intervals (ms) and the frames shown."""
    await page.get_by_role("button", name="▶ Stream").click(timeout=wait_ms)
    seen, t_end = [], time.perf_counter() + seconds
    while time.perf_counter() < t_end:
        st = await _status(page)
        if st and st[0] != "paused" and (not seen or st[1] != seen[-1][1]):
            seen.append((time.perf_counter(), st[1]))
        # stop after ``frames`` frames, once two frames were seen (a latency needs two: under
        # load the first status line read can already show a later frame)
        if st and (st[0] == "finished" or (frames and st[1] + 1 >= frames and len(seen) >= 2)):
            break
        await asyncio.sleep(0.05)
    await _pause(page, min(wait_ms / 1000, 60.0))
    intervals = [1000 * (t2 - t1) / (k2 - k1) for (t1, k1), (t2, k2) in zip(seen, seen[1:])
                 for _ in range(k2 - k1)]
    return intervals, (seen[-1][1] + 1 if seen else 0)


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


async def _session(browser, url: str, upload: Path, stream_s: float, frames: Optional[int],
                   wait_ms: int, res: SessionResult) -> None:
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
        res.intervals_ms["recognizer"], res.frames["recognizer"] = await _stream(
            page, stream_s, wait_ms, frames)
        await page.get_by_text("Detection", exact=True).click()
        await page.get_by_text("Video in the runs folder").click(timeout=wait_ms)
        await page.get_by_text("Stream (live)").click(timeout=wait_ms)
        await page.get_by_text(re.compile("press Stream or Step")).wait_for(timeout=wait_ms)
        res.intervals_ms["detectors"], res.frames["detectors"] = await _stream(
            page, stream_s, wait_ms, frames)
        await _idle(page)  # the run after Pause is over: its errors are on the page
        res.errors += await page.evaluate(ERRORS_JS)
    except Exception as e:  # a timeout or a missing element: the session failed
        res.errors.append(f"{type(e).__name__}: {str(e).splitlines()[0]}")
    finally:
        await context.close()


async def _all(url: str, upload: Path, sessions: int, stream_s: float, frames: Optional[int],
               wait_ms: int) -> list:
    from playwright.async_api import async_playwright

    results = [SessionResult() for _ in range(sessions)]
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            await asyncio.gather(*(_session(browser, url, upload, stream_s, frames, wait_ms,
                                            r) for r in results))
        finally:
            await browser.close()
    return results


def run_sessions(url: str, upload: Path, sessions: int = 4, stream_s: float = 20.0,
                 frames: Optional[int] = None, wait_ms: int = 600_000) -> tuple[list, int]:
    """``sessions`` browser sessions at once against the app at ``url``, each stream played
    for ``stream_s`` seconds (or until ``frames`` frames were shown); returns their
    :class:`SessionResult` and the server's peak memory (bytes)."""
    marker = f"--server.port {url.rsplit(':', 1)[1]}"
    with Peak(lambda: resident_bytes(marker)) as mem:
        results = asyncio.run(_all(url, upload, sessions, stream_s, frames, wait_ms))
    return results, mem.peak


def percentile(values: list, q: float) -> float:
    """The ``q``-th percentile (0-100) by linear interpolation between closest ranks."""
    xs = sorted(values)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * q / 100
    lo = int(k)
    return xs[lo] + (xs[min(lo + 1, len(xs) - 1)] - xs[lo]) * (k - lo)


def summary(results: list, peak_bytes: int) -> dict:
    """The figures of a run: median and 95th percentile of the time to maps and of each
    stream's per-frame latency, frames shown, errors, the server's peak memory."""
    maps = [r.maps_s for r in results if r.maps_s is not None]
    out = {"sessions": len(results), "maps_done": len(maps),
           "maps_s_median": statistics.median(maps) if maps else float("nan"),
           "maps_s_p95": percentile(maps, 95),
           "errors": [e for r in results for e in r.errors],
           "limits_notes": sorted({r.limits_note for r in results}),
           "server_peak_mb": peak_bytes / 2**20}
    for kind in ("recognizer", "detectors"):
        ms = [v for r in results for v in r.intervals_ms[kind]]
        out[f"{kind}_frames"] = [r.frames.get(kind, 0) for r in results]
        out[f"{kind}_ms_median"] = statistics.median(ms) if ms else float("nan")
        out[f"{kind}_ms_p95"] = percentile(ms, 95)
    return out


def report(fig: dict) -> str:
    """The figures as the lines ``benchmarks/load_app.py`` prints."""
    lines = [f"sessions: {fig['sessions']} at once; maps shown in {fig['maps_done']}",
             f"time to maps: median {fig['maps_s_median']:.1f} s, 95th percentile "
             f"{fig['maps_s_p95']:.1f} s"]
    for kind, what in (("recognizer", "online recognizer"), ("detectors", "both detectors")):
        lines.append(f"per-frame latency, {what}: median {fig[f'{kind}_ms_median']:.0f} ms, "
                     f"95th percentile {fig[f'{kind}_ms_p95']:.0f} ms (frames shown per "
                     f"session: {fig[f'{kind}_frames']})")
    lines.append(f"errors: {len(fig['errors'])}" + "".join(f"\n  {e}" for e in fig["errors"]))
    lines += [f"the page on the upload: {n}" for n in fig["limits_notes"]]
    lines.append(f"server peak memory: {fig['server_peak_mb']:.0f} MB")
    return "\n".join(lines)


def log_tracebacks(text: str) -> tuple[int, int]:
    """``(reports, disconnects)`` in a server log: exception reports, a chain of tracebacks
    ("During handling of the above exception...") counted once; ``disconnects`` are those of
    Streamlit's own websocket handler when a browser goes away mid-send (every frame in
    streamlit/starlette/uvicorn, every exception ``starlette.websockets.WebSocketDisconnected``),
    which no app code can cause or catch."""
    reports, chained, in_tb = [], False, False
    for line in text.splitlines():
        if line.startswith("Traceback (most recent call last)"):
            if not (chained and reports):
                reports.append(([], []))
            chained, in_tb = False, True
        elif line.startswith(("During handling of the above exception",
                              "The above exception was the direct cause")):
            chained = True
        elif in_tb and (m := re.match(r'\s+File "([^"]+)"', line)):
            reports[-1][0].append(m.group(1))
        elif in_tb and line and not line[0].isspace():
            reports[-1][1].append(line)
            in_tb = False

    def disconnect(files: list, exceptions: list) -> bool:
        return bool(files) and all(re.search(r"site-packages/(streamlit|starlette|uvicorn)/", f)
                                   for f in files) and \
            all(e.startswith("starlette.websockets.WebSocketDisconnected") for e in exceptions)
    return len(reports), sum(disconnect(f, e) for f, e in reports)


def session_folders(tmpdir: Path) -> list[Path]:
    """The session folders left in the upload areas under ``tmpdir`` (the server's TMPDIR)."""
    return sorted(Path(tmpdir).glob("tsm_ui_uploads_*/session_*"))


def wait_until(check, timeout_s: float, every_s: float = 0.5) -> bool:
    """Poll ``check()`` until it is true or ``timeout_s`` passed; its last answer."""
    deadline = time.monotonic() + timeout_s
    while not (ok := check()) and time.monotonic() < deadline:
        time.sleep(every_s)
    return bool(ok)


__all__ = ["SessionResult", "Peak", "resident_bytes", "run_sessions", "summary", "report", "percentile",
           "session_folders", "wait_until"]
