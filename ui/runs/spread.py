"""How the TSM-vs-TSN comparisons over the training seeds (:mod:`.seeds`) are shown: as mean
[min-max over seeds] per model and of TSM minus TSN, the per-seed differences and the
paired-bootstrap 95% interval of TSM minus TSN over the test items (:func:`spread_rows`), with
the per-seed differences drawn as points beside the mean and its min-max bar
(:func:`spread_figure`). The report's headline table and the app's Runs view show the same rows
and figure."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence

from .. import models
from .seeds import Spread, interval, seed_layouts, signed

HEADER = (
    "comparison",
    "TSN",
    "TSM",
    "TSM - TSN",
    "TSM - TSN per seed",
    "TSM - TSN 95% CI (paired bootstrap)",
    "TSM ahead (CI above zero)",
)
"""TSN, TSM, TSM - TSN: mean [min-max over seeds]; the CI: over the test items."""
GROUPS = ("recognition", "detection", "dissection")
SEED_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "cross", "x", "star")


def _per_seed(s: Spread) -> str:
    return ", ".join(signed(v, s.comparison.digits) for v in s.diff)


def spread_rows(found: Sequence[Spread]) -> list:
    """Rows of :data:`HEADER` (strings); the last column is blank for figures not claimed and
    where there is no interval (the CI column then says why)."""
    verdict = {True: "yes", False: "no", None: ""}
    return [
        [
            s.title,
            s.text(s.tsn),
            s.text(s.tsm),
            s.text(s.diff, sign=True),
            _per_seed(s),
            s.interval_text(),
            verdict[s.holds],
        ]
        for s in found
    ]


def _short(title: str) -> str:
    return title.split(", ", 1)[-1].split(" (")[0]


def spread_figure(found: Sequence[Spread]) -> Optional[Any]:
    """One panel per group (its own unit): TSM - TSN per comparison, a point per seed and the
    mean with a [min, max] bar; zero dashed. None when there is nothing to draw."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    groups = [g for g in GROUPS if any(s.comparison.group == g for s in found)]
    if not groups:
        return None
    fig = make_subplots(
        rows=1,
        cols=len(groups),
        subplot_titles=groups,
        column_widths=[max(1, sum(s.comparison.group == g for s in found)) for g in groups],
        horizontal_spacing=0.07,
    )
    seeds = list(dict.fromkeys(seed for s in found for seed in s.seeds))
    shown = set()
    for c, g in enumerate(groups, 1):
        part = [s for s in found if s.comparison.group == g]
        names = [_short(s.comparison.title) for s in part]
        for k, seed in enumerate(seeds):
            xs = [n for n, s in zip(names, part) if seed in s.seeds]
            ys = [s.diff[s.seeds.index(seed)] for s in part if seed in s.seeds]
            label = f"seed {seed}" if seed is not None else "run"
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=ys,
                    mode="markers",
                    name=label,
                    legendgroup=label,
                    showlegend=label not in shown,
                    marker=dict(
                        size=7,
                        color=models.css(models.TSM),
                        opacity=0.45,
                        symbol=SEED_SYMBOLS[k % len(SEED_SYMBOLS)],
                    ),
                ),
                row=1,
                col=c,
            )
            shown.add(label)
        stats = [interval(s.diff) for s in part]
        fig.add_trace(
            go.Scatter(
                x=names,
                y=[m for m, _, _ in stats],
                mode="markers",
                name="mean, min-max over seeds",
                legendgroup="mean",
                showlegend="mean" not in shown,
                marker=dict(
                    size=12, symbol="line-ew-open", color=models.css(models.TSM), line=dict(width=3)
                ),
                error_y=dict(
                    type="data",
                    symmetric=False,
                    array=[hi - m for m, _, hi in stats],
                    arrayminus=[m - lo for m, lo, _ in stats],
                    width=8,
                ),
            ),
            row=1,
            col=c,
        )
        shown.add("mean")
        fig.add_hline(y=0, line=dict(color=models.css(models.CHANCE), dash="dash"), row=1, col=c)
        fig.update_yaxes(title_text=f"TSM - TSN ({part[0].comparison.unit})", row=1, col=c)
    fig.update_layout(
        title="TSM minus TSN at each training seed (points) and mean, min-max over seeds",
        height=420,
        margin=dict(l=60, r=20, t=80, b=120),
        legend=dict(orientation="h", y=-0.35),
    )
    return fig


def spread_note(root: Path, found: Sequence[Spread]) -> str:
    seeds = [s for s in seed_layouts(root) if s is not None]
    which = f"training seeds {', '.join(map(str, seeds))}" if seeds else "one run (no seeds.json)"
    det = [s.seeds for s in found if s.comparison.group == "detection"]
    if seeds and det and det[0] != seeds:
        which += f" (the detectors': {', '.join(map(str, det[0]))})"
    failing = [s.comparison.title for s in found if s.holds is False]
    unknown = [s.comparison.title for s in found if s.comparison.claimed and s.holds is None]
    claims = (
        "every claimed effect (last column) holds: its interval lies above zero"
        if not failing
        else f"NOT every claimed effect holds: {'; '.join(failing)} (its interval reaches zero "
        "or below)"
    )
    if unknown:
        claims += f"; no interval for {'; '.join(unknown)}"
    ci = next((s.interval for s in found if s.interval is not None), None)
    boot = (
        f"{ci.drawn} resamples of the test items (clips; snippets for detection), the same "
        "items for both models and every seed, each resample's statistic the mean over the "
        "seeds of TSM - TSN recomputed on it; the 2.5th and 97.5th percentiles"
        if ci is not None
        else "not computed (written with the report: intervals.json)"
    )
    return (
        f"TSN, TSM and TSM - TSN: mean [min-max over seeds] over {which}, on one test set: "
        f"the spread over training seeds, not an interval; detection on the synthetic VID "
        f"set's held-out test snippets, recognition and dissection on the held-out test "
        f"clips. 95% CI: paired bootstrap, {boot}; {claims}. The tables below are the first "
        "seed's runs."
    )
