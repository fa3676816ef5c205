"""The app's tables: one kind of number per table (or per column), one format per kind, and an
empty cell shown as a dash — never ``None`` or ``nan``.

Kinds: scores in [0, 1] (3 decimals), percentages (1 decimal), ratios (2 decimals, ``x``),
counts (whole numbers), probabilities (3 decimals).
"""
from __future__ import annotations

from typing import Mapping, Optional, Sequence

import pandas as pd
import streamlit as st

SCORE = "{:.3f}"
PROBABILITY = "{:.3f}"
PERCENT = "{:.1f}"
RATIO = "{:.2f}x"
COUNT = "{:,.0f}"
VALUE = "{:,.2f}"
MISSING = "–"


def numbers(rows: Mapping[str, Mapping[str, object]], columns: Sequence[str]) -> pd.DataFrame:
    """``rows[row][column]`` as a float table of ``columns`` (absent, None and non-numbers:
    NaN), rows in the order given."""
    data = {r: [_number(v.get(c)) for c in columns] for r, v in rows.items()}
    return pd.DataFrame.from_dict(data, orient="index", columns=list(columns), dtype=float)


def _number(v: object) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return float("nan")
    return float(v)


def show(df: pd.DataFrame, fmt: str | Mapping[str, str], hide_index: bool = False,
         key: Optional[str] = None) -> None:
    """``df`` with ``fmt`` (one format, or one per column; other columns as text), empty cells
    as :data:`MISSING`."""
    formats = {c: fmt for c in df.columns} if isinstance(fmt, str) else dict(fmt)
    text = {c: _text for c in df.columns if c not in formats}
    st.dataframe(df.style.format({**formats, **text}, na_rep=MISSING), width="stretch",
                 hide_index=hide_index, key=key)


def _text(v: object) -> str:
    return MISSING if v is None or (isinstance(v, float) and v != v) else str(v)


def per_row(rows: Mapping[str, Mapping[str, object]], key: str, fmt: str, what: str) -> str:
    """``'<what>: TSN 1.23x, TSM –'``: one figure of every row, formatted, for a caption."""
    cells = [f"{name} " + (fmt.format(float(v)) if not isinstance(v, bool)
                           and isinstance(v, (int, float)) and v == v else MISSING)
             for name, v in ((n, values.get(key)) for n, values in rows.items())]
    return f"{what}: " + ", ".join(cells)


def top_k_table(rows: list[tuple[str, float]]) -> None:
    """A top-k table: class and probability."""
    show(pd.DataFrame(rows, columns=["class", "probability"]), {"probability": PROBABILITY},
         hide_index=True)


def top_k_text(rows: list[tuple[str, float]]) -> str:
    """The same table as Markdown: light enough to redraw for every frame of a stream."""
    lines = ["| class | probability |", "|---|---:|"]
    lines += [f"| {_escape(name)} | {PROBABILITY.format(p)} |" for name, p in rows]
    return "\n".join(lines)


def _escape(text: str) -> str:
    return str(text).replace("|", "\\|").replace("*", "\\*").replace("_", "\\_")
