"""Runs view: training curves, benchmark tables, early recognition (``early.csv`` of ``tsm test
--online``), the TSN vs TSM dissection comparison and TSM vs TSN over the training seeds
(:mod:`.runs_seeds`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from .. import sources
from ..settings import DEMO_HINT, UISettings
from ..sources import runs_folder
from ..widgets import charts, runs_seeds, tables
from ..widgets.dissection_run import load

KEY = "runs"
X_KEYS = ("step", "epoch", "iter", "iteration")
DEFAULT_METRICS = ("loss", "top1")
SCORES = (
    "accuracy",
    "pointing",
    "pointing_active",
    "pointing_tol",
    "iou_dataset",
    "iou_max20",
    "temporal_auc",
)  # the dissection's scores in [0, 1]
COUNTS = {"clips": "clips scored", "pointing_frames": "frames with the actor's box"}


@st.cache_data(show_spinner=False, max_entries=64)
def _metrics(path: str, mtime: float) -> pd.DataFrame:
    return runs_folder.read_metrics_csv(Path(path))


@st.cache_data(show_spinner=False, max_entries=16)
def _bench(path: str, mtime: float) -> tuple:
    return runs_folder.read_bench_json(Path(path))


@st.cache_data(show_spinner=False, ttl=30)
def _find(root: str, name: str) -> list[str]:
    return [str(p) for p in runs_folder.find_files(Path(root), name)]


def _training(root: Path) -> bool:
    st.subheader("Training curves")
    logs = sorted(_find(str(root), "metrics.csv"))  # by path: seed 0, 1, 2, ...
    if not logs:
        st.info("No training logs (`metrics.csv`) found.")
        return False
    label = {p: runs_folder.rel(Path(p).parent, root) for p in logs}
    chosen = st.multiselect(
        "Runs", logs, default=logs, format_func=label.get, key=f"{KEY}_logs"
    )  # every run (every seed) by default
    data = {}
    for p in chosen:
        try:
            data[label[p]] = _metrics(p, Path(p).stat().st_mtime)
        except (ValueError, OSError) as e:
            st.error(f"Cannot read `{label[p]}/metrics.csv`: {e}")
    if not data:
        return True
    cols = [c for c in dict.fromkeys(c for df in data.values() for c in df.columns)]
    x_keys = [k for k in X_KEYS if k in cols]
    metrics = [c for c in cols if c not in X_KEYS and c not in runs_folder.TEXT_COLUMNS]
    if not x_keys or not metrics:
        st.warning(f"The logs have no {'/'.join(X_KEYS)} column or no metric column.")
        return True
    left, right = st.columns([3, 1])
    shown = left.multiselect(
        "Metrics",
        metrics,
        key=f"{KEY}_metrics",
        default=[m for m in DEFAULT_METRICS if m in metrics] or metrics[:1],
    )
    x_key = right.radio("x axis", x_keys, horizontal=True, key=f"{KEY}_x")
    if shown:
        st.plotly_chart(
            charts.training_curves(data, shown, x_key), width="stretch", key=f"{KEY}_curves"
        )
    return True


def _benchmarks(root: Path) -> bool:
    st.subheader("Benchmarks")
    files = _find(str(root), "bench.json")
    if not files:
        st.info(
            "No benchmark results (`bench.json`, written by `tsm bench`) found: `tsm demo "
            f"--extras --out {root}` adds them (`tsm bench --quick --out "
            f"{root}/bench/bench.json`)."
        )
        return False
    for p in files:
        try:
            rows, meta = _bench(p, Path(p).stat().st_mtime)
        except (ValueError, OSError) as e:
            st.error(f"Cannot read `{runs_folder.rel(Path(p), root)}`: {e}")
            continue
        st.markdown(f"`{runs_folder.rel(Path(p), root)}`")
        df = pd.DataFrame(rows)
        if "met" in df:
            df["met"] = [None if v is None else ("yes" if v else "no") for v in df["met"]]
        df["value"] = pd.to_numeric(df["value"], errors="coerce")
        tables.show(df, {"value": tables.VALUE}, hide_index=True)
        if meta.get("machine"):
            st.caption(", ".join(f"{k}: {v}" for k, v in meta["machine"].items()))
    return True


@st.cache_data(show_spinner=False, max_entries=16)
def _early_csv(path: str, mtime: float) -> dict:
    from tsm_apps.evaluation.early_files import read_early_csv

    return read_early_csv(Path(path))


def _early(root: Path) -> bool:
    from tsm_apps.evaluation.early_files import EARLY_CSV, early_figure, label, whole_video_top1

    st.subheader("Early recognition")
    files = _find(str(root), EARLY_CSV)
    if not files:
        st.info(
            f"No early-recognition results (`{EARLY_CSV}`, written by `tsm test ONLINE.pth "
            f"--online ... --out DIR`) found: `tsm demo --extras --out {root}` adds them "
            "(an online TSM, then early recognition against TSM and TSN)."
        )
        return False
    for i, p in enumerate(files):
        name = runs_folder.rel(Path(p), root)
        try:
            res = _early_csv(p, Path(p).stat().st_mtime)
        except (ValueError, OSError) as e:
            st.error(f"Cannot read `{name}`: {e}")
            continue
        st.plotly_chart(
            early_figure(res, f"Early recognition: {name}"), width="stretch", key=f"{KEY}_early_{i}"
        )
        whole = whole_video_top1(res)
        if whole:
            st.caption(
                "whole video: " + ", ".join(f"{label(m)} {v:.1f}% top-1" for m, v in whole.items())
            )
    return True


def _dissection(root: Path) -> bool:
    st.subheader("Dissection: TSN vs TSM")
    try:
        run = load(root)
        if run is None:
            st.info("No dissection run found.")
            return False
        summary = sources.dissection_summary(run)
    except (sources.Unavailable, ValueError, FileNotFoundError) as e:
        st.info(f"No dissection comparison to show: {e}")
        return False
    scores = [
        k for k in SCORES if any(isinstance(r.get(k), (int, float)) for r in summary.values())
    ]
    st.markdown("Scores (0 to 1, higher is better)")
    tables.show(tables.numbers(summary, scores), tables.SCORE, labels=tables.DISSECTION_SCORES)
    st.caption(
        tables.per_row(
            summary, "mass_ratio", tables.RATIO, "mass ratio (attention in acting / still frames)"
        )
    )
    for key, what in COUNTS.items():
        st.caption(tables.per_row(summary, key, tables.COUNT, what))
    bars = {m: {k: row.get(k) for k in scores} for m, row in summary.items()}
    st.plotly_chart(
        charts.model_bars(bars, "where the maps look (higher is better)"),
        width="stretch",
        key=f"{KEY}_dissect",
    )
    st.caption("from " + ", ".join(f"`{runs_folder.rel(f, root)}`" for f in run.folders.values()))
    return True


def render(settings: UISettings) -> None:
    st.header("Runs")
    root = settings.runs_dir
    shown = [
        _training(root),
        _benchmarks(root),
        _early(root),
        _dissection(root),
        runs_seeds.render(root),
    ]
    if not any(shown):
        st.info(DEMO_HINT.format(runs=root))
