"""Plotly figures of the app. Inputs are plain per-frame series; each figure marks the frame the
slider shows with a vertical line."""

from __future__ import annotations

from typing import Mapping, Sequence

import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from ... import models

_HEIGHT = 340


def _mark_frame(fig: go.Figure, frame: int | None) -> go.Figure:
    if frame is not None:
        fig.add_vline(x=frame, line_dash="dot", line_color="gray")
    return fig


def detection_timeline(
    max_scores: Mapping[str, Sequence[float]],
    counts: Mapping[str, Sequence[int]],
    frame: int | None = None,
    threshold: float | None = None,
    marks: Mapping[str, Sequence[int]] | None = None,
) -> go.Figure:
    """Per-frame best detection score (top) and number of kept detections (bottom) per model.

    ``max_scores[model]`` and ``counts[model]`` have one entry per frame (NaN score: no box);
    ``marks[model]``: frames where ``model`` finds a ground-truth object the other misses
    (triangles along the top of the score panel, in the model's colour).
    """
    fig = make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.08,
        row_heights=[0.6, 0.4],
        subplot_titles=("best detection score", "detections kept"),
    )
    for name, scores in max_scores.items():
        x = list(range(len(scores)))
        fig.add_trace(
            go.Scatter(
                x=x,
                y=list(scores),
                mode="lines+markers",
                name=name,
                legendgroup=name,
                line=dict(color=models.css(name)),
            ),
            row=1,
            col=1,
        )
        fig.add_trace(
            go.Bar(
                x=x,
                y=list(counts[name]),
                name=name,
                legendgroup=name,
                showlegend=False,
                marker_color=models.css(name),
            ),
            row=2,
            col=1,
        )
    for name, frames in (marks or {}).items():
        fig.add_trace(
            go.Scatter(
                x=list(frames),
                y=[1.0] * len(frames),
                mode="markers",
                name=f"only {name} finds a GT object",
                marker=dict(symbol="triangle-down", size=10, color=models.css(name)),
            ),
            row=1,
            col=1,
        )
    if threshold is not None:
        fig.add_hline(y=threshold, line_dash="dash", line_color="gray", row=1, col=1)
    fig.update_layout(
        height=_HEIGHT + 80,
        barmode="group",
        margin=dict(t=40, b=30),
        legend=dict(orientation="h", y=1.12),
    )
    fig.update_yaxes(range=[0, 1.06], row=1, col=1)
    fig.update_xaxes(title_text="frame", row=2, col=1)
    return _mark_frame(fig, frame)


def attention_mass(
    mass: Mapping[str, Sequence[float]],
    frame: int | None = None,
    title: str = "attention mass per frame",
) -> go.Figure:
    """One line per model: the per-frame attention mass (as given by the dissection)."""
    fig = go.Figure()
    for name, values in mass.items():
        fig.add_trace(
            go.Scatter(
                x=list(range(len(values))),
                y=list(values),
                mode="lines+markers",
                name=name,
                line=dict(color=models.css(name)),
            )
        )
    fig.update_layout(
        title=title,
        height=_HEIGHT,
        xaxis_title="frame",
        margin=dict(t=50, b=30),
        legend=dict(orientation="h", y=1.1),
    )
    return _mark_frame(fig, frame)


def training_curves(
    logs: Mapping[str, pd.DataFrame], metrics: Sequence[str], x_key: str
) -> go.Figure:
    """One panel per metric; one line per run and split (``split`` column, when present).

    ``logs[run]`` is a ``metrics.csv`` table with numeric ``x_key`` and metric columns.
    """
    if not metrics:
        raise ValueError("training_curves needs at least one metric")
    fig = make_subplots(rows=1, cols=len(metrics), subplot_titles=list(metrics))
    palette = qualitative.Plotly
    k, shown = 0, set()
    for run, df in logs.items():
        groups = df.groupby("split", sort=True) if "split" in df else [("", df)]
        for split, g in groups:
            color, name = palette[k % len(palette)], f"{run} {split}".strip()
            k += 1
            for i, m in enumerate(metrics, start=1):
                if m not in g or x_key not in g or g[m].isna().all():
                    continue
                rows = g[[x_key, m]].dropna()
                fig.add_trace(
                    go.Scatter(
                        x=rows[x_key].tolist(),
                        y=rows[m].tolist(),
                        mode="lines+markers",
                        name=name,
                        legendgroup=name,
                        showlegend=name not in shown,
                        line=dict(color=color),
                    ),
                    row=1,
                    col=i,
                )
                shown.add(name)
    fig.update_xaxes(title_text=x_key)
    fig.update_layout(
        height=_HEIGHT + 40, margin=dict(t=40, b=30), legend=dict(orientation="h", y=-0.25)
    )
    return fig


def model_bars(table: Mapping[str, Mapping[str, float]], title: str) -> go.Figure:
    """Grouped bars: ``table[model][metric] -> value`` (metrics on the x axis, None: no bar)."""
    fig = go.Figure()
    for model, row in table.items():
        keys = list(row)
        fig.add_trace(
            go.Bar(x=keys, y=[row.get(k) for k in keys], name=model, marker_color=models.css(model))
        )
    fig.update_layout(title=title, barmode="group", height=_HEIGHT, margin=dict(t=50, b=30))
    return fig
