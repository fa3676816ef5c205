"""The files of ``tsm test --online --out DIR`` (early recognition), defined once: their names,
writing, reading ``early.csv`` back, and the Plotly figure that ``early.html``, the app's Runs
view and the demo report all draw.

``early.csv``: a header ``fraction,<method>,...`` then one row per fraction of the video seen
(``0.1`` ... ``1.0``) with each method's top-1 (%); methods are
:data:`tsm_apps.evaluation.early.EARLY_METHODS` (``tsn``, ``tsm_offline``, ``tsm_online``), the ones
evaluated. ``early.json`` holds the same plus the video count and the whole-video top-1 (the
fraction 1.0 row: table 7's online vs offline comparison).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from ..io import atomic_write_json, atomic_write_text

EARLY_CSV, EARLY_JSON, EARLY_HTML = "early.csv", "early.json", "early.html"
LABELS = {"tsn": "TSN", "tsm_offline": "offline TSM", "tsm_online": "online TSM"}
WHOLE_VIDEO = ("tsm_online", "tsm_offline")  # table 7: online vs offline on the whole video


def label(method: str) -> str:
    """Display name of a method column (``tsm_online`` -> ``online TSM``)."""
    return LABELS.get(method, method)


def whole_video_top1(res: dict) -> dict:
    """``{method: top-1}`` at fraction 1.0 for online and offline TSM (those present); empty
    when the fractions stop short of the whole video."""
    fractions = [float(p) for p in res["fractions"]]
    if not fractions or abs(fractions[-1] - 1.0) > 1e-9:
        return {}
    return {m: res["top1"][m][-1] for m in WHOLE_VIDEO if m in res["top1"]}


def write_early(res: dict, out: str | Path) -> Path:
    """``early.json``, ``early.csv`` and ``early.html`` (Plotly) in the folder ``out``;
    ``res`` as :func:`tsm_apps.evaluation.early.early_recognition` returns it."""
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out_dir / EARLY_JSON, res)
    cols = list(res["top1"])
    lines = ["fraction," + ",".join(cols)] + [
        f"{p}," + ",".join(f"{res['top1'][c][i]:.4f}" for c in cols)
        for i, p in enumerate(res["fractions"])
    ]
    atomic_write_text(out_dir / EARLY_CSV, "\n".join(lines) + "\n")
    atomic_write_text(out_dir / EARLY_HTML, early_figure(res).to_html(include_plotlyjs="cdn"))
    return out_dir / EARLY_CSV


def _number(path: Path, line: int, col: str, cell: str) -> float:
    try:
        return float(cell)
    except ValueError:
        raise ValueError(
            f"{path}:{line}: column {col!r} holds {cell!r}, expected a number"
        ) from None


def read_early_csv(path: str | Path) -> dict:
    """``{"fractions": [...], "top1": {method: [...]}}`` of an ``early.csv``; ValueError
    naming the file and line when it is not one."""
    path = Path(path)
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    if not rows or rows[0][:1] != ["fraction"] or len(rows[0]) < 2:
        raise ValueError(
            f"{path}:1: expected the header fraction,<method>,... "
            f"(tsm test --online), got {','.join(rows[0]) if rows else 'nothing'}"
        )
    cols = rows[0][1:]
    res: dict[str, Any] = {"fractions": [], "top1": {c: [] for c in cols}}
    for i, row in enumerate(rows[1:], start=2):
        if len(row) != len(cols) + 1:
            raise ValueError(f"{path}:{i}: {len(row)} cells, expected {len(cols) + 1}")
        res["fractions"].append(_number(path, i, "fraction", row[0]))
        for c, cell in zip(cols, row[1:]):
            res["top1"][c].append(_number(path, i, c, cell))
    if not res["fractions"]:
        raise ValueError(f"{path}: no rows")
    return res


def early_figure(res: dict, title: str = "Early recognition"):
    """Plotly figure: top-1 (%) against the video seen (%), a line per method; beside it the
    whole-video top-1 of online vs offline TSM as bars (when the fractions reach 1.0)."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    whole = whole_video_top1(res)
    widths = [0.72, 0.28] if whole else [1.0]
    fig = make_subplots(
        rows=1,
        cols=len(widths),
        column_widths=widths,
        subplot_titles=["top-1 vs video seen", "whole video"][: len(widths)],
    )
    x = [100 * float(p) for p in res["fractions"]]
    for m, ys in res["top1"].items():
        fig.add_trace(
            go.Scatter(x=x, y=list(ys), mode="lines+markers", name=label(m)), row=1, col=1
        )
    if whole:
        fig.add_trace(
            go.Bar(
                x=[label(m) for m in whole],
                y=list(whole.values()),
                text=[f"{v:.1f}" for v in whole.values()],
                showlegend=False,
                name="whole video",
            ),
            row=1,
            col=2,
        )
    fig.update_xaxes(title_text="video seen (%)", row=1, col=1)
    fig.update_yaxes(title_text="top-1 (%)", rangemode="tozero")
    fig.update_layout(
        title=title, height=380, margin=dict(t=70, b=40), legend=dict(orientation="h", y=-0.2)
    )
    return fig
