"""The figures of a load test (:mod:`tools.loadtest`): the Live page's latency meter, the summary
of a run over its sessions, the lines ``benchmarks/load_app.py`` prints, and the exception
reports of a server log."""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass

METER = re.compile(
    r"received (\d+) · answered (\d+) \(([\d.]+)/s\) · shown (\d+) \(([\d.]+) of answered\) · "
    r"dropped (\d+) · step (?:(\d+) ms|-) · capture → answer (?:p50 (\d+) / p95 (\d+) ms|-) · "
    r"capture → shown (?:p50 (\d+) / p95 (\d+) ms|-) · batch (\d+)"
)
KINDS = {"recognizer": "online recognizers (TSN, TSM)", "detectors": "detectors (TSN, TSM)"}


@dataclass
class Meter:
    """One model's latency meter as the Live page shows it: frames received, answers computed
    (and per second), answers shown (and their share of the answered), frames dropped, the
    model's median step (ms), capture-to-answer and capture-to-shown latency (ms, p50 / p95; NaN
    before any), the batch of its last step."""

    received: int
    answered: int
    rate: float
    shown: int
    share: float
    dropped: int
    step_ms: float
    answer_ms: tuple
    shown_ms: tuple
    batch: int

    @classmethod
    def parse(cls, text: str) -> "Meter":
        m = METER.search(text)
        if m is None:
            raise ValueError(f"not a latency meter: {text!r}")
        g = m.groups()
        ms = [float("nan") if v is None else float(v) for v in g[6:11]]
        return cls(
            int(g[0]),
            int(g[1]),
            float(g[2]),
            int(g[3]),
            float(g[4]),
            int(g[5]),
            ms[0],
            (ms[1], ms[2]),
            (ms[3], ms[4]),
            int(g[11]),
        )


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
        meters = [r.meters.get(kind, {}) for r in results]
        out[f"{kind}_answered"] = [
            min((m.answered for m in ms.values()), default=0) for ms in meters
        ]
        out[f"{kind}_rate"] = [ms["TSM"].rate if "TSM" in ms else float("nan") for ms in meters]
        out[f"{kind}_share"] = [
            min((m.share for m in ms.values()), default=float("nan")) for ms in meters
        ]
        out[f"{kind}_shown_p50"] = [
            ms["TSM"].shown_ms[0] if "TSM" in ms else float("nan") for ms in meters
        ]
        out[f"{kind}_step"] = [ms["TSM"].step_ms if "TSM" in ms else float("nan") for ms in meters]
        out[f"{kind}_shown_p95"] = [
            ms["TSM"].shown_ms[1] if "TSM" in ms else float("nan") for ms in meters
        ]
        out[f"{kind}_batch"] = max((r.batches.get(kind, 0) for r in results), default=0)
        rates = [x for x in out[f"{kind}_rate"] if x == x]
        # each session's rate over its share of the model's total rate (1.0: an equal share)
        fair = [x * len(rates) / sum(rates) for x in rates] if rates and sum(rates) else []
        out[f"{kind}_fair"] = fair
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
            f"live, {what}, per session (TSM): answered/s {_figures(fig[f'{kind}_rate'], '.1f')}"
            f" (over an equal share of the model's total: {_figures(fig[f'{kind}_fair'], '.2f')});"
            f" shown / answered {_figures(fig[f'{kind}_share'], '.2f')}; the model's step "
            f"{_figures(fig[f'{kind}_step'], '.0f')} ms; capture → shown p50 "
            f"{_figures(fig[f'{kind}_shown_p50'], '.0f')} ms, p95 "
            f"{_figures(fig[f'{kind}_shown_p95'], '.0f')} ms; largest batch {fig[f'{kind}_batch']}"
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
