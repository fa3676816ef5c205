"""The app's tables: one kind of number per table (or per column), one format per kind, and an
empty cell shown as a dash — never ``None`` or ``nan``.

Kinds: scores in [0, 1] (3 decimals), percentages (1 decimal), ratios (2 decimals, ``x``),
counts (whole numbers), probabilities (3 decimals).
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

import pandas as pd
import streamlit as st

from dissect.report import ROWS

SCORE = "{:.3f}"
PROBABILITY = "{:.3f}"
PERCENT = "{:.1f}"
RATIO = "{:.2f}x"
COUNT = "{:,.0f}"
VALUE = "{:,.2f}"
MISSING = "–"
DISSECTION_SCORES = {"accuracy": "top-1 accuracy", **dict(ROWS)}
"""Headers of the dissection's scores: metric key -> words (:data:`dissect.report.ROWS`)."""


def numbers(rows: Mapping[str, Mapping[str, object]], columns: Sequence[str]) -> pd.DataFrame:
    """``rows[row][column]`` as a float table of ``columns`` (absent, None and non-numbers:
    NaN), rows in the order given."""
    data = {r: [_number(v.get(c)) for c in columns] for r, v in rows.items()}
    return pd.DataFrame.from_dict(data, orient="index", columns=list(columns), dtype=float)


def _number(v: object) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return float("nan")
    return float(v)


def show(
    df: pd.DataFrame,
    fmt: str | Mapping[str, str],
    hide_index: bool = False,
    key: Optional[str] = None,
    labels: Optional[Mapping[str, str]] = None,
) -> None:
    """``df`` with ``fmt`` (one format, or one per column; other columns as text), every row
    shown (no inner scroll), empty cells as :data:`MISSING`, headers through ``labels``
    (column -> words; others as they are)."""
    st.dataframe(
        styled(df, fmt, labels), width="stretch", hide_index=hide_index, key=key, height="content"
    )


def styled(
    df: pd.DataFrame, fmt: str | Mapping[str, str], labels: Optional[Mapping[str, str]] = None
):
    """The Styler :func:`show` draws. A column with an empty cell becomes text (formatted
    numbers and :data:`MISSING`): the browser's grid writes a null cell as "None" whatever the
    Styler says; a full column of numbers stays numbers (sortable), formatted by the Styler."""
    formats = {c: fmt for c in df.columns} if isinstance(fmt, str) else dict(fmt)
    shown = df.copy()
    for c in df.columns:
        if c not in formats or df[c].isna().any():
            shown[c] = [_text(v, formats.get(c)) for v in df[c]]
    names = {c: (labels or {}).get(c, c) for c in df.columns}
    numeric = {
        names[c]: f
        for c, f in formats.items()
        if c in names and pd.api.types.is_numeric_dtype(shown[c])
    }
    return shown.rename(columns=names).style.format(numeric, na_rep=MISSING)


def _text(v: object, fmt: Optional[str] = None) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return MISSING
    if fmt is not None and isinstance(v, (int, float)) and not isinstance(v, bool):
        return fmt.format(float(v))
    return str(v)


def per_row(rows: Mapping[str, Mapping[str, object]], key: str, fmt: str, what: str) -> str:
    """``'<what>: TSN 1.23x, TSM –'``: one figure of every row, formatted, for a caption."""
    cells = [
        f"{name} "
        + (
            fmt.format(float(v))
            if not isinstance(v, bool) and isinstance(v, (int, float)) and v == v
            else MISSING
        )
        for name, v in ((n, values.get(key)) for n, values in rows.items())
    ]
    return f"{what}: " + ", ".join(cells)


def top_k_table(rows: list[tuple[str, float]]) -> None:
    """A top-k table: class and probability."""
    show(
        pd.DataFrame(rows, columns=["class", "probability"]),
        {"probability": PROBABILITY},
        hide_index=True,
    )


def size_text(num_bytes: int) -> str:
    """``"12.5 kB"`` below 1 MiB, else ``"1.23 MB"``."""
    return f"{num_bytes / 2**10:.1f} kB" if num_bytes < 2**20 else f"{num_bytes / 2**20:.2f} MB"


def amount(v: float) -> str:
    """A positive amount for a caption: ``'5,460'`` from 100 up, ``'12.3'``, ``'0.123'``."""
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"


def top_k_text(rows: list[tuple[str, float]]) -> str:
    """The same table as Markdown: light enough to redraw for every frame of a stream."""
    lines = ["| class | probability |", "|---|---:|"]
    lines += [f"| {_escape(name)} | {PROBABILITY.format(p)} |" for name, p in rows]
    return "\n".join(lines)


def _escape(text: str) -> str:
    return str(text).replace("|", "\\|").replace("*", "\\*").replace("_", "\\_")
