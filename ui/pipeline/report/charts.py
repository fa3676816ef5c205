"""The report's charts: one panel per metric (its own y axis and unit), a bar per model, and
chance and the baselines as dashed reference lines — a class count or a chance level is never a
bar beside accuracies. Colours: :mod:`ui.models` (each model and each reference its own)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional, Sequence

from ... import models

REF_DASH = ("dash", "dot", "dashdot", "longdash")
MAX_COLUMNS = 4


@dataclass
class Panel:
    """One metric: ``bars[model] -> value`` (None: no bar) and ``refs[name] -> value`` drawn as
    horizontal lines; ``unit`` labels the y axis."""

    title: str
    unit: str
    bars: Mapping[str, Optional[float]]
    refs: Mapping[str, Optional[float]] = field(default_factory=dict)


def _number(v) -> Optional[float]:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def panels_figure(title: str, panels: Sequence[Panel]):
    """A Plotly figure of the panels side by side (at most :data:`MAX_COLUMNS` a row); panels
    without any bar are left out; None when none is left."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    panels = [p for p in panels if any(_number(v) is not None for v in p.bars.values())]
    if not panels:
        return None
    cols = min(MAX_COLUMNS, len(panels))
    rows = -(-len(panels) // cols)
    fig = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=[p.title for p in panels],
        horizontal_spacing=0.08,
        vertical_spacing=0.22 if rows > 1 else 0.1,
    )
    shown = set()
    for i, p in enumerate(panels):
        r, c = i // cols + 1, i % cols + 1
        names = list(p.bars)
        for m in names:
            fig.add_trace(
                go.Bar(
                    x=[m],
                    y=[_number(p.bars[m])],
                    name=m,
                    legendgroup=m,
                    showlegend=m not in shown,
                    marker_color=models.css(m),
                ),
                row=r,
                col=c,
            )
            shown.add(m)
        for k, (ref, v) in enumerate(p.refs.items()):
            if _number(v) is None:
                continue
            fig.add_trace(
                go.Scatter(
                    x=[names[0], names[-1]],
                    y=[v, v],
                    mode="lines",
                    name=ref,
                    legendgroup=ref,
                    showlegend=ref not in shown,
                    line=dict(color=models.css(ref), dash=REF_DASH[k % len(REF_DASH)]),
                ),
                row=r,
                col=c,
            )
            shown.add(ref)
        fig.update_yaxes(title_text=p.unit, rangemode="tozero", row=r, col=c)
    fig.update_layout(
        title=title,
        height=300 * rows + 80,
        margin=dict(l=50, r=20, t=80, b=40),
        legend=dict(orientation="h", y=-0.12),
        bargap=0.35,
    )
    return fig
