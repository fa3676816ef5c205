"""The demo's report, ``REPORT.md`` (the tables) and ``REPORT.html`` (the tables with one chart
panel per metric, then the pictures). First every comparison over the training seeds
(:mod:`ui.runs.spread`: mean [min-max over seeds], a point per seed, the paired-bootstrap 95%
interval over the test items, computed here into ``intervals.json``:
:mod:`ui.runs.intervals`) and what each comparison controls (:mod:`.controls`), then the first
seed's tables and pictures:
CAM strips of clips chosen by rule and detection frames where online TSM finds what TSN
misses. :mod:`.tables` and :mod:`.dissection` read the JSON files the steps wrote,
:mod:`.charts` draws the panels, :mod:`.pictures` the strips and frames."""

from __future__ import annotations

import os
from pathlib import Path

from tsm_apps.io import atomic_write_text

from ...runs.intervals import write_intervals
from .controls import controls_html, controls_markdown, controls_paragraphs
from .dissection import dissection_table
from .pictures import cam_section, detection_section
from .tables import (
    DET_KEYS,
    bench_table,
    detection_table,
    early_table,
    recognition_table,
    spread_table,
    timing_table,
)

__all__ = ["DET_KEYS", "build_tables", "write_report"]

STYLE = (
    "body{font-family:sans-serif;max-width:1100px;margin:auto}table{border-collapse:"
    "collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
)


def build_tables(root: Path) -> list:
    """The first seed's tables, in the report's order."""
    return [
        recognition_table(root),
        detection_table(root),
        dissection_table(root),
        early_table(root),
        bench_table(root),
        timing_table(root),
    ]


def write_report(root: str | os.PathLike) -> tuple:
    """Write ``intervals.json``, ``REPORT.md`` and ``REPORT.html`` in ``root``; returns the
    paths of the two reports."""
    import plotly.offline

    root = Path(root)
    write_intervals(root)
    tables = [spread_table(root)] + build_tables(root)
    controls = controls_paragraphs()
    md = (
        "# TSM Apps demo report\n\nCAM strips and detection frames: see REPORT.html.\n\n"
        + tables[0].markdown()
        + "\n"
        + controls_markdown(controls)
        + "\n"
        + "\n".join(t.markdown() for t in tables[1:])
    )
    page = (
        "<!doctype html><html><head><meta charset='utf-8'><title>TSM Apps demo report</title>"
        f"<style>{STYLE}</style><script>{plotly.offline.get_plotlyjs()}</script></head><body>"
        "<h1>TSM Apps demo report</h1>"
        + tables[0].html()
        + controls_html(controls)
        + "\n".join(t.html() for t in tables[1:4])
        + cam_section(root)
        + detection_section(root)
        + "\n".join(t.html() for t in tables[4:])
        + "</body></html>"
    )
    md_path, html_path = root / "REPORT.md", root / "REPORT.html"
    atomic_write_text(md_path, md)
    atomic_write_text(html_path, page)
    return md_path, html_path
