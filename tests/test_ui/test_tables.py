"""The app's table and caption formats: dashes in the cells themselves, headers in words, full
columns of numbers kept as numbers, amounts written out."""

from __future__ import annotations

import pandas as pd

from ui.app.widgets import tables


def test_styled_cells_hold_the_dash_and_headers_take_words():
    df = pd.DataFrame(
        {"pointing": [0.12345, float("nan")], "accuracy": [0.5, 0.25], "note": ["a", None]},
        index=["TSN", "TSM"],
    )
    sty = tables.styled(
        df,
        {"pointing": tables.SCORE, "accuracy": tables.SCORE},
        {"pointing": "pointing game", "accuracy": "top-1 accuracy"},
    )
    data = sty.data
    assert list(data.columns) == ["pointing game", "top-1 accuracy", "note"]
    assert list(data["pointing game"]) == ["0.123", "–"]  # a gap: text, formatted
    assert list(data["note"]) == ["a", "–"]
    assert list(data["top-1 accuracy"]) == [0.5, 0.25]  # full: numbers, formatted on display
    shown = sty._translate(False, False)["body"]
    assert [cell["display_value"] for cell in shown[1][1:]] == ["–", "0.250", "–"]


def test_amounts_for_captions():
    assert tables.amount(5460.3) == "5,460"
    assert tables.amount(100.0) == "100"
    assert tables.amount(12.34) == "12.3"
    assert tables.amount(0.12345) == "0.123"
