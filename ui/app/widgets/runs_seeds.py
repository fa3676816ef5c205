"""Runs view section: TSM vs TSN over the training seeds of a ``tsm demo`` run folder — the
report's headline table (mean [min-max over seeds], per-seed differences, the paired-bootstrap
95% interval of TSM - TSN over the test items from ``intervals.json``, whether each claimed
effect holds: its interval above zero) and its figure (a point per seed, the mean with a
min-max bar)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from ...runs.seeds import spreads
from ...runs.spread import HEADER, spread_figure, spread_note, spread_rows
from . import tables

KEY = "runs_seeds"


def render(root: Path) -> bool:
    """The section; False (with a line saying how to get it) when no comparison is found."""
    st.subheader("TSM vs TSN over training seeds")
    found = spreads(root)
    if not found:
        st.info(
            "No TSM-vs-TSN results of both models found (`tsm demo` writes them for "
            "several training seeds: recognizers/, detection/, dissect/ and seeds/<k>/)."
        )
        return False
    rows = [[cell or None for cell in row] for row in spread_rows(found)]
    tables.show(pd.DataFrame(rows, columns=list(HEADER)), {}, hide_index=True, key=f"{KEY}_table")
    st.caption(spread_note(root, found))
    fig = spread_figure(found)
    if fig is not None:
        st.plotly_chart(fig, width="stretch", key=f"{KEY}_figure")
    return True
