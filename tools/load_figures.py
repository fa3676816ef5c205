"""The figures of a load test (:mod:`tools.loadtest`): the frames a page showed of a live stream,
the summary of a run over its sessions, the lines ``benchmarks/load_app.py`` prints, and the
exception reports of a server log."""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass

MODEL_MS = re.compile(r" · model median (\d+) ms")
KINDS = {"recognizer": "online recognizer", "detectors": "both detectors side by side"}


@dataclass
class Shown:
    """The frames of one stream as the page showed them: ``(time ms, frame index, status
    line)`` each, in order (frames the page never showed are not in it)."""

    frames: list

    @property
    def count(self) -> int:
        return len(self.frames)

    def intervals_ms(self) -> list:
        """Milliseconds between consecutive frames shown."""
        return [b[0] - a[0] for a, b in zip(self.frames, self.frames[1:])]

    def fps(self) -> float:
        """Frames shown per second, first to last; NaN below two frames."""
        if self.count < 2 or self.frames[-1][0] <= self.frames[0][0]:
            return float("nan")
        return 1000 * (self.count - 1) / (self.frames[-1][0] - self.frames[0][0])

    def model_ms(self) -> float:
        """The models' median time a frame, as the last status line shown gives it."""
        m = MODEL_MS.search(self.frames[-1][2]) if self.frames else None
        return float(m.group(1)) if m else float("nan")


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
    out = {
        "sessions": len(results),
        "maps_done": len(maps),
        "maps_s_median": statistics.median(maps) if maps else float("nan"),
        "maps_s_p95": percentile(maps, 95),
        "errors": [e for r in results for e in r.errors],
        "limits_notes": sorted({r.limits_note for r in results}),
        "server_peak_mb": peak_bytes / 2**20,
    }
    for kind in KINDS:
        ms = [v for r in results for v in r.intervals_ms[kind]]
        out[f"{kind}_frames"] = [r.frames.get(kind, 0) for r in results]
        out[f"{kind}_ms_median"] = statistics.median(ms) if ms else float("nan")
        out[f"{kind}_ms_p95"] = percentile(ms, 95)
        fps = [r.fps.get(kind, float("nan")) for r in results]
        model = [r.model_ms.get(kind, float("nan")) for r in results]
        out[f"{kind}_fps"] = fps
        out[f"{kind}_model_ms"] = model
        # frames shown a second over the models' own rate (1 / their time a frame)
        out[f"{kind}_ratio"] = [f * m / 1000 for f, m in zip(fps, model)]
    return out


def report(fig: dict) -> str:
    """The figures as the lines ``benchmarks/load_app.py`` prints."""
    lines = [
        f"sessions: {fig['sessions']} at once; maps shown in {fig['maps_done']}",
        f"time to maps: median {fig['maps_s_median']:.1f} s, 95th percentile "
        f"{fig['maps_s_p95']:.1f} s",
    ]
    for kind, what in KINDS.items():
        lines.append(
            f"live, {what}: frames/s shown {_figures(fig[f'{kind}_fps'], '.1f')}; "
            f"the models' time a frame {_figures(fig[f'{kind}_model_ms'], '.0f')} ms "
            f"(their rate {_figures([1000 / m for m in fig[f'{kind}_model_ms']], '.1f')}"
            f" frames/s); shown / model rate {_figures(fig[f'{kind}_ratio'], '.2f')} "
            "(per session)"
        )
        lines.append(
            f"  interval between frames shown: median {fig[f'{kind}_ms_median']:.0f} ms,"
            f" 95th percentile {fig[f'{kind}_ms_p95']:.0f} ms (frames shown per "
            f"session: {fig[f'{kind}_frames']})"
        )
    lines.append(f"errors: {len(fig['errors'])}" + "".join(f"\n  {e}" for e in fig["errors"]))
    lines += [f"the page on the upload: {n}" for n in fig["limits_notes"]]
    lines.append(f"server peak memory: {fig['server_peak_mb']:.0f} MB")
    return "\n".join(lines)


def _figures(values: list, fmt: str) -> str:
    return ", ".join(format(v, fmt) for v in values)


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
        elif line.startswith(
            ("During handling of the above exception", "The above exception was the direct cause")
        ):
            chained = True
        elif in_tb and (m := re.match(r'\s+File "([^"]+)"', line)):
            reports[-1][0].append(m.group(1))
        elif in_tb and line and not line[0].isspace():
            reports[-1][1].append(line)
            in_tb = False

    def disconnect(files: list, exceptions: list) -> bool:
        return (
            bool(files)
            and all(re.search(r"site-packages/(streamlit|starlette|uvicorn)/", f) for f in files)
            and all(e.startswith("starlette.websockets.WebSocketDisconnected") for e in exceptions)
        )

    return len(reports), sum(disconnect(f, e) for f, e in reports)
