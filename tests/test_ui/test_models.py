"""Model names and colours are defined once (ui.models) and used by the app and the report:
each model and each reference line has its own colour."""

from __future__ import annotations

import pytest

from ui import models
from ui.app.widgets import charts
from ui.pipeline.report.charts import Panel, panels_figure


def test_every_model_and_reference_has_its_own_colour():
    names = [*models.MODELS, models.CENTRE, models.RANDOM, models.CHANCE]
    colours = [models.rgb(n) for n in names]
    assert len(set(colours)) == len(names) and models.GT_COLOR not in colours
    assert models.rgb("tsn") == models.rgb("TSN") and models.css("TSM") == "rgb(214,39,40)"
    assert models.rgb("something else") == models.OTHER_COLOR
    assert (
        models.model_name("tsm") == "TSM"
        and models.title("TSM", online=True) == "TSM (temporal shift, online)"
        and models.title("TSN", online=True) == "TSN (2D baseline, no temporal shift)"
    )
    with pytest.raises(ValueError, match="unknown model 'i3d'"):
        models.model_name("i3d")


def test_report_reference_lines_and_app_bars_use_the_colours():
    fig = panels_figure(
        "t",
        [
            Panel(
                "pointing",
                "score",
                {"TSN": 0.3, "TSM": 0.8},
                {"centre prior": 0.5, "random map": 0.2, "chance": 0.1},
            )
        ],
    )
    colour = {t.name: (t.marker.color if t.type == "bar" else t.line.color) for t in fig.data}
    assert colour == {
        n: models.css(n) for n in ("TSN", "TSM", "centre prior", "random map", "chance")
    }
    bars = charts.model_bars(
        {"TSN": {"a": 1}, "centre prior": {"a": 2}, "random map": {"a": 3}}, "t"
    )
    assert [t.marker.color for t in bars.data] == [
        models.css("TSN"),
        models.css("centre prior"),
        models.css("random map"),
    ]
