"""The report's tables: :class:`Table` (Markdown, and HTML with charts) and every measured table
of a run folder but the dissection's (:mod:`.dissection`).

Reads only the JSON files the steps wrote (layout: :mod:`ui.runs.layout`):
``recognizers/{tsn,tsm}/eval.json``, ``detection/{tsn,tsm}/test/metrics.json``,
``early/early.csv`` (optional), ``bench/bench.json`` and the step timings ``timing.json``.
A missing file leaves its section saying which file is missing, never a made-up number.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any, Optional, Sequence

from tsm_apps.io import read_json

from ...runs.layout import MODELS, RunLayout
from ...runs.seeds import spreads
from ...runs.spread import HEADER, spread_figure, spread_note, spread_rows
from .charts import Panel, panels_figure

DET_KEYS = ("mAP", "mAP_slow", "mAP_medium", "mAP_fast", "mAP_corrupted")


def _fmt(v: Any) -> str:
    if isinstance(v, bool) or v is None:
        return "" if v is None else str(v)
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v)


class Table:
    """A titled table, rendered as Markdown and as HTML (followed by ``figure``, a Plotly
    figure, when given)."""

    def __init__(
        self,
        title: str,
        header: Sequence[str],
        rows: Sequence[Sequence[Any]],
        note: str = "",
        figure: Any = None,
    ) -> None:
        self.title, self.header, self.rows, self.note = title, header, rows, note
        self.figure = figure

    def markdown(self) -> str:
        out = [f"## {self.title}", ""]
        if self.note:
            out += [self.note, ""]
        if self.rows:
            out.append("| " + " | ".join(self.header) + " |")
            out.append("|" + "---|" * len(self.header))
            out += ["| " + " | ".join(_fmt(v) for v in r) + " |" for r in self.rows]
            out.append("")
        return "\n".join(out)

    def html(self) -> str:
        out = [f"<h2>{html.escape(self.title)}</h2>"]
        if self.note:
            out.append(f"<p>{html.escape(self.note)}</p>")
        if self.rows:
            out.append(
                "<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in self.header) + "</tr>"
            )
            out += [
                "<tr>" + "".join(f"<td>{html.escape(_fmt(v))}</td>" for v in r) + "</tr>"
                for r in self.rows
            ]
            out.append("</table>")
        if self.rows and self.figure is not None:
            out.append(self.figure.to_html(full_html=False, include_plotlyjs=False))
        return "\n".join(out)


def class_count(root: Path) -> Optional[int]:
    """The class count of the recognizers (from their ``eval.json``), or None."""
    runs = RunLayout(root)
    for m in MODELS:
        ev = read_json(runs.recognizer_eval(m), missing_ok=True) or {}
        if ev.get("classes"):
            return len(ev["classes"])
    return None


def recognition_table(root: Path) -> Table:
    """Val top-1 / top-5 (``eval.json``) and, when the demo scored it, the held-out test split's
    (``test.json``: ``best.pth``, chosen on val, on ``test.txt``)."""
    rows, missing, runs = [], [], RunLayout(root)
    for m in MODELS:
        ev = read_json(runs.recognizer_eval(m), missing_ok=True)
        if ev is None:
            missing.append(runs.rel(runs.recognizer_eval(m)))
            continue
        te = read_json(runs.recognizer_test(m), missing_ok=True) or {}
        k = len(ev.get("classes") or []) or None
        rows.append(
            [
                m.upper(),
                ev.get("top1"),
                ev.get("top5"),
                te.get("top1"),
                te.get("top5"),
                k,
                100.0 / k if k else None,
            ]
        )
    note = (
        f"missing: {', '.join(missing)}"
        if missing
        else "top-1 / top-5 (%) on the synthetic temporal set, 1 clip, centre crop: val, and the "
        "held-out test split scored with best.pth (chosen on val)"
    )
    k = class_count(root)
    chance = {"chance": 100.0 / k if k else None}
    panels = [
        Panel("top-1", "accuracy (%)", {r[0]: r[1] for r in rows}, chance),
        Panel(
            "top-5",
            "accuracy (%)",
            {r[0]: r[2] for r in rows},
            {"chance": min(100.0, 500.0 / k) if k else None},
        ),
    ]
    if any(r[3] is not None for r in rows):
        panels.insert(0, Panel("test top-1", "accuracy (%)", {r[0]: r[3] for r in rows}, chance))
    fig = panels_figure("Recognition accuracy (one panel per metric)", panels)
    return Table(
        "Recognition (synthetic temporal set)",
        ["model", "top-1", "top-5", "test top-1", "test top-5", "classes", "chance (%)"],
        rows,
        note,
        fig,
    )


def detection_table(root: Path) -> Table:
    rows, missing, runs = [], [], RunLayout(root)
    for m in MODELS:
        met = read_json(runs.detection_metrics(m), missing_ok=True)
        if met is None:
            missing.append(runs.rel(runs.detection_metrics(m)))
            continue
        rows.append(
            [{"tsn": "TSN R-FCN", "tsm": "online-TSM R-FCN"}[m]] + [met.get(k) for k in DET_KEYS]
        )
    note = (
        f"missing: {', '.join(missing)}"
        if missing
        else (
            "mAP (%) on the synthetic ImageNet-VID held-out test snippets: overall, by motion speed, "
            "corrupted frames"
        )
    )
    names = ["overall", "slow", "medium", "fast", "corrupted"]
    fig = panels_figure(
        "Detection mAP by split (one panel per split)",
        [
            Panel(n, "mAP (%)", {r[0].split()[0]: r[j + 1] for r in rows})
            for j, n in enumerate(names)
        ],
    )
    return Table(
        "Video object detection (synthetic ImageNet-VID)",
        ["model", "mAP", "slow", "medium", "fast", "corrupted"],
        rows,
        note,
        fig,
    )


def early_table(root: Path) -> Table:
    """Early recognition (``tsm test --online --out <root>/early``, not part of the demo): top-1
    per method at each fraction of the video seen, and the figure the app shows too."""
    from tsm_apps.evaluation.early_files import (
        early_figure,
        label,
        read_early_csv,
        whole_video_top1,
    )

    title, lay = "Early recognition (top-1 vs fraction of the video seen)", RunLayout(root)
    if not lay.early_csv.is_file():
        return Table(
            title,
            [],
            [],
            "not part of this run: `tsm demo --extras` adds it (`tsm "
            "test ONLINE.pth --online --offline-checkpoint TSM.pth --tsn-checkpoint "
            f"TSN.pth --data DATA --out {lay.early_csv.parent}`)",
        )
    try:
        res = read_early_csv(lay.early_csv)
    except ValueError as e:
        return Table(title, [], [], f"cannot read it: {e}")
    rows = [[label(m)] + list(v) for m, v in res["top1"].items()]
    whole = ", ".join(f"{label(m)} {v:.1f}%" for m, v in whole_video_top1(res).items())
    note = f"top-1 (%) from {lay.rel(lay.early_csv)}" + (f"; whole video: {whole}" if whole else "")
    return Table(
        title,
        ["method"] + [f"{100 * p:g}%" for p in res["fractions"]],
        rows,
        note,
        early_figure(res, title),
    )


def bench_table(root: Path) -> Table:
    bench = RunLayout(root).bench
    b = read_json(bench, missing_ok=True)
    if b is None:
        return Table(
            "Performance (tsm bench)",
            [],
            [],
            "not part of this run: `tsm demo "
            f"--extras` adds it (`tsm bench --quick --out {bench}`)",
        )
    rows = [
        [
            f["name"],
            f["value"],
            f["unit"],
            f.get("goal") or "",
            "" if f.get("met") is None else ("yes" if f["met"] else "no"),
            f["device"],
        ]
        for f in b["figures"]
    ]
    m = b.get("machine", {})
    return Table(
        "Performance (tsm bench)",
        ["figure", "value", "unit", "goal", "met", "device"],
        rows,
        f"machine: {m.get('platform')}, {m.get('cpus')} CPUs, torch {m.get('torch')}",
    )


def timing_table(root: Path) -> Table:
    """``timing.json``: ``{step: {"seconds", "cpu_seconds", "reused"}}`` (or the older ``{step:
    seconds or 'reused'}``); the row ``demo`` is the whole run (wall, CPU of the steps that ran,
    the machine and its load average before and after)."""
    t = read_json(RunLayout(root).timing, missing_ok=True) or {}
    rows = []
    for k, v in t.items():
        secs, cpu, reused = (
            (v.get("seconds"), v.get("cpu_seconds"), v.get("reused"))
            if isinstance(v, dict)
            else (v if not isinstance(v, str) else None, None, isinstance(v, str))
        )
        rows.append(
            [
                k,
                "" if secs is None else f"{secs:.1f}",
                "" if cpu is None else f"{cpu:.1f}",
                "reused" if reused else "ran",
            ]
        )
    demo = t.get("demo") if isinstance(t.get("demo"), dict) else {}
    note = (
        (
            f"demo: {demo.get('cpus')} CPUs ({demo.get('cpu') or 'unknown CPU'}), load average "
            f"{demo.get('load', 0):.2f} before and {demo.get('load_after', 0):.2f} after; CPU "
            "seconds do not depend on the load"
        )
        if demo
        else ""
    )
    return Table("Steps", ["step", "seconds (when it ran)", "CPU seconds", "this run"], rows, note)


def spread_table(root: Path) -> Table:
    title = "TSM vs TSN over training seeds"
    found = spreads(root)
    if not found:
        return Table(title, [], [], "no comparison yet: no seed has both models' results")
    return Table(
        title, list(HEADER), spread_rows(found), spread_note(root, found), spread_figure(found)
    )
