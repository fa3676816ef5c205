"""HTML reports of dissection runs with Plotly charts (plotly.js inlined once: no CDN, works
offline): one run (``report.html`` in the run folder) or several side by side (TSM vs TSN:
:mod:`dissect.comparison`).
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import List, Sequence

from .faithfulness import CURVES
from .layout import Run, load_run
from .storage import atomic_write_bytes

ROWS = (
    ("pointing", "pointing game (all frames with a box)"),
    ("pointing_active", "pointing game (frames where the action happens)"),
    ("pointing_tol", "pointing game, standard tolerance (15 px at 224)"),
    ("iou_dataset", "IoU, dataset threshold (20% of pixels kept)"),
    ("iou_max20", "IoU, 20%-of-max threshold"),
    ("temporal_auc", "temporal AUC of per-frame mass (active vs not)"),
    ("mass_ratio", "mass ratio active / inactive frames"),
    ("deletion_pixels_auc", "deletion AUC, pixels in each frame (lower = more faithful)"),
    ("insertion_pixels_auc", "insertion AUC, pixels in each frame (higher = more faithful)"),
    ("deletion_frames_auc", "deletion AUC, whole frames (lower = more faithful)"),
    ("insertion_frames_auc", "insertion AUC, whole frames (higher = more faithful)"),
)
KIND_NAMES = {
    "method": "maps",
    "flow": "flow stream",
    "centre": "centre prior",
    "random": "random map",
    "sanity": "randomised weights",
}
MAX_CLIPS_SHOWN = 16
MASS_CLIPS = 6
MAX_PREDICTIONS = 50


class _Page:
    """Accumulates HTML; the first chart carries plotly.js inline."""

    def __init__(self, title: str) -> None:
        self.parts = [
            f"<!doctype html><html><head><meta charset='utf-8'><title>"
            f"{html.escape(title)}</title><style>body{{font-family:sans-serif;"
            f"margin:2em}} table{{border-collapse:collapse}} td,th{{border:1px solid "
            f"#ccc;padding:4px 8px;text-align:right}} img{{max-width:100%}}</style>"
            f"</head><body><h1>{html.escape(title)}</h1>"
        ]
        self.js_done = False

    def add(self, fragment: str) -> None:
        self.parts.append(fragment)

    def chart(self, fig) -> None:
        from plotly.offline import plot

        self.parts.append(
            plot(fig, output_type="div", include_plotlyjs=not self.js_done, auto_open=False)
        )
        self.js_done = True

    def write(self, path: Path) -> Path:
        return atomic_write_bytes(path, ("\n".join(self.parts) + "</body></html>").encode())


def _fmt(v) -> str:
    return "–" if v is None else (f"{v:.3f}" if isinstance(v, float) else html.escape(str(v)))


def _table(header: Sequence[str], rows: List[Sequence]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_fmt(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def run_name(run: Run) -> str:
    """A short name: the checkpoint's folder (e.g. ``tsm``) and the method."""
    s = run.settings.get("settings", {})
    ckpt = Path(s.get("checkpoint", "?"))
    return f"{ckpt.parent.name or ckpt.stem} {s.get('method', '')}".strip()


def _columns(runs: Sequence[Run], names: Sequence[str]) -> tuple:
    """Table columns: each run's maps, flow stream and sanity check, then the first run's
    baselines; ``(header, aggregates, (top-1, top-5) of each column's model or None)``."""
    cols, header, acc = [], [], []
    for run, name in zip(runs, names):
        agg, m = run.metrics.get("aggregate", {}), run.metrics
        cols.append(agg.get("method", {}))
        header.append(name)
        acc.append((m.get("accuracy"), m.get("top5_accuracy")))
        for kind, top in (("flow", (m.get("flow_accuracy"), None)), ("sanity", (None, None))):
            if kind in agg:
                cols.append(agg[kind])
                header.append(f"{name}: {KIND_NAMES[kind]}")
                acc.append(top)
    base = runs[0].metrics.get("aggregate", {})
    for kind in ("centre", "random"):
        cols.append(base.get(kind, {}))
        header.append(KIND_NAMES[kind])
        acc.append((None, None))
    return header, cols, acc


def _summary_table(runs: Sequence[Run], names: Sequence[str]) -> str:
    header, cols, acc = _columns(runs, names)
    rows = [[label] + [c.get(key) for c in cols] for key, label in ROWS]
    rows += [["top-1 accuracy"] + [a[0] for a in acc], ["top-5 accuracy"] + [a[1] for a in acc]]
    return _table(["metric"] + header, rows)


def _bars(runs: Sequence[Run], names: Sequence[str]):
    import plotly.graph_objects as go

    header, cols, _ = _columns(runs, names)
    keys = ("pointing", "pointing_active", "iou_dataset", "temporal_auc")
    fig = go.Figure(
        [go.Bar(name=h, x=list(keys), y=[c.get(k) for k in keys]) for h, c in zip(header, cols)]
    )
    fig.update_layout(
        barmode="group",
        title="Where the maps look (higher is better)",
        yaxis_range=[0, 1],
        height=420,
    )
    return fig


def _faithfulness_chart(runs: Sequence[Run], names: Sequence[str]):
    """Mean deletion / insertion curves (class probability vs fraction changed), one panel per
    curve, a line per column that has them (each run's maps, the random map)."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    header, cols, _ = _columns(runs, names)
    titles = [n.replace("_", ", ") for n in CURVES]
    fig = make_subplots(rows=1, cols=len(CURVES), subplot_titles=titles, shared_yaxes=True)
    for i, curve in enumerate(CURVES):
        for h, c in zip(header, cols):
            pts = c.get("faithfulness_curves", {}).get(curve)
            if pts:
                fig.add_trace(
                    go.Scatter(
                        name=h,
                        x=pts["fractions"],
                        y=pts["scores"],
                        mode="lines+markers",
                        legendgroup=h,
                        showlegend=i == 0,
                    ),
                    row=1,
                    col=i + 1,
                )
    fig.update_layout(
        height=360, title="Deletion (lower) and insertion (higher) curves: mean class probability"
    )
    fig.update_xaxes(title_text="fraction changed", range=[0, 1])
    return fig


def _units_chart(runs: Sequence[Run], names: Sequence[str]):
    import plotly.graph_objects as go

    traces = []
    for run, name in zip(runs, names):
        layers = run.units.get("layers", {})
        traces.append(
            go.Bar(name=name, x=list(layers), y=[v["detectors"] for v in layers.values()])
        )
    fig = go.Figure(traces)
    q = next((r.units.get("quantile") for r in runs if r.units), None)
    fig.update_layout(
        barmode="group",
        height=380,
        yaxis_title="detector units",
        title=f"Actor-detector units per layer (top {q} quantile, IoU > "
        f"{next((r.units.get('min_iou') for r in runs if r.units), None)})",
    )
    return fig


def _mass_chart(runs: Sequence[Run], names: Sequence[str], cid: str):
    import plotly.graph_objects as go

    fig = go.Figure()
    rec = runs[0].clips[cid].record
    active = rec["scores"]["method"].get("active")
    if active:
        fig.add_trace(
            go.Bar(
                name="action happens",
                x=list(range(len(active))),
                y=[1.0 if a else 0.0 for a in active],
                opacity=0.2,
            )
        )
    for run, name in zip(runs, names):
        mass = run.clips[cid].record["scores"]["method"]["mass"]
        peak = max(mass) or 1.0
        fig.add_trace(go.Scatter(name=name, y=[m / peak for m in mass], mode="lines+markers"))
    fig.update_layout(
        title=f"per-frame map mass (scaled to max 1): {cid}",
        height=300,
        xaxis_title="frame",
        yaxis_range=[0, 1.05],
    )
    return fig


def _overlays(runs: Sequence[Run], names: Sequence[str], ids: List[str], out_dir: Path) -> str:
    parts = ["<h2>Overlays (per-clip colour scale; green: actor box)</h2>"]
    for cid in ids[:MAX_CLIPS_SHOWN]:
        rec = runs[0].clips[cid].record
        parts.append(f"<h3>{html.escape(cid)} (label {html.escape(_label(rec))})</h3>")
        for run, name in zip(runs, names):
            files = run.clips[cid]
            r = files.record
            if files.png is not None:
                src = html.escape(os.path.relpath(files.png, out_dir))
                parts.append(
                    f"<p>{html.escape(name)}: predicted "
                    f"{html.escape(str(r.get('pred_name', r['pred'])))}, map of class "
                    f"{html.escape(str(r.get('class_name', r['class'])))}"
                    f"<br><img src='{src}'></p>"
                )
    return "\n".join(parts)


def _label(rec: dict) -> str:
    if rec.get("label") is None:
        return "none"
    return f"{rec['label']}: {rec['label_name']}" if rec.get("label_name") else str(rec["label"])


def _top5(rec: dict) -> str:
    return "<br>".join(
        f"{html.escape(str(t['name']))} {100 * t['prob']:.1f}%" for t in rec.get("top5", [])
    )


def _predictions(runs: Sequence[Run], names: Sequence[str], ids: List[str]) -> str:
    """Per clip: label, the frames used (of how many) and each run's top-5 with probabilities."""
    head = "".join(f"<th>{html.escape(n)}: top-5</th>" for n in names)
    rows = []
    for cid in ids[:MAX_PREDICTIONS]:
        rec = runs[0].clips[cid].record
        frames = f"{rec.get('indices')} of {rec.get('num_frames', '?')}"
        cells = "".join(
            f"<td style='text-align:left'>{_top5(r.clips[cid].record)}</td>" for r in runs
        )
        rows.append(
            f"<tr><td>{html.escape(cid)}</td><td>{html.escape(_label(rec))}</td>"
            f"<td>{html.escape(frames)}</td>{cells}</tr>"
        )
    more = (
        f"<p>first {MAX_PREDICTIONS} of {len(ids)} clips; all in metrics.json</p>"
        if len(ids) > MAX_PREDICTIONS
        else ""
    )
    return (
        f"<h2>Predictions (top-5 with probabilities; frames used)</h2><table><tr><th>clip"
        f"</th><th>label</th><th>frames</th>{head}</tr>{''.join(rows)}</table>{more}"
    )


def _common_ids(runs: Sequence[Run]) -> List[str]:
    ids = set(runs[0].clips)
    for r in runs[1:]:
        ids &= set(r.clips)
    return sorted(ids)


def _counts(runs: Sequence[Run], names: Sequence[str]) -> str:
    rows = [
        [
            n,
            r.metrics.get("counts", {}).get("done"),
            r.metrics.get("counts", {}).get("failed"),
            html.escape(str(r.metrics.get("threshold", {}).get("dataset_values", {}))),
        ]
        for r, n in zip(runs, names)
    ]
    return _table(["run", "clips done", "clips skipped (failed)", "dataset thresholds"], rows)


def write_report(runs: Sequence[Run], names: Sequence[str], path: Path, title: str) -> Path:
    """One report over ``runs`` (one run, or TSM vs TSN): table, charts, overlays."""
    page = _Page(title)
    page.add(_counts(runs, names))
    page.add("<h2>Summary</h2>" + _summary_table(runs, names))
    page.chart(_bars(runs, names))
    if any("faithfulness_curves" in c for c in _columns(runs, names)[1]):
        page.add(
            f"<p>Deletion / insertion (RISE): the class probability as each frame's "
            f"most-attributed pixels, or whole frames by map mass, are replaced by the clip's "
            f"per-channel mean or put back; the random map's curves are read by "
            f"{html.escape(names[0])}'s model.</p>"
        )
        page.chart(_faithfulness_chart(runs, names))
    if any(r.units for r in runs):
        page.chart(_units_chart(runs, names))
    ids = _common_ids(runs)
    page.add(_predictions(runs, names, ids))
    for cid in ids[:MASS_CLIPS]:
        page.chart(_mass_chart(runs, names, cid))
    page.add(_overlays(runs, names, ids, path.parent))
    return page.write(path)


def write_run_report(root) -> Path:
    run = load_run(root)
    return write_report(
        [run], [run_name(run)], Path(root) / "report.html", f"Dissection: {run_name(run)}"
    )
