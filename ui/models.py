"""The models the ui compares and the references beside them: names, titles and colours, defined
once for the app and the report.

Colours are RGB tuples (pictures) or ``rgb(r,g,b)`` strings (:func:`css`, Plotly); the two
baselines of the dissection (the centre prior and the random map) and chance each have a colour
of their own, distinct from the models' and from each other.
"""

from __future__ import annotations

TSN, TSM = "TSN", "TSM"
MODELS = (TSN, TSM)
"""Display names, in the order every view and table shows them."""

DESCRIPTIONS = {TSN: "2D baseline, no temporal shift", TSM: "temporal shift"}

CENTRE, RANDOM, CHANCE = "centre prior", "random map", "chance"
BASELINES = {"centre": CENTRE, "random": RANDOM}
"""The dissection's model-free baselines: key in ``metrics.json`` -> display name."""

COLORS = {
    TSN: (31, 119, 180),  # blue
    TSM: (214, 39, 40),  # red
    CENTRE: (255, 127, 14),  # orange
    RANDOM: (148, 103, 189),  # purple
    CHANCE: (127, 127, 127),  # grey
}
GT_COLOR = (44, 160, 44)  # green: ground truth (boxes, the actor)
OTHER_COLOR = (90, 90, 90)


def model_name(key: str) -> str:
    """``'TSN'`` for the run-folder key ``'tsn'`` (:data:`ui.runs.layout.MODELS`)."""
    name = str(key).upper()
    if name not in MODELS:
        raise ValueError(f"unknown model {key!r}; expected one of {MODELS}")
    return name


def title(model: str, online: bool = False) -> str:
    """``'TSM (temporal shift, online)'``: a panel's heading."""
    extra = ", online" if online and model == TSM else ""
    return f"{model} ({DESCRIPTIONS[model]}{extra})"


def rgb(name: str) -> tuple:
    """The colour of a model or reference line (``'TSN'``, ``'tsn'``, ``'centre prior'``, ...);
    :data:`OTHER_COLOR` for anything else."""
    return COLORS.get(name, COLORS.get(str(name).upper(), OTHER_COLOR))


def css(name: str) -> str:
    """:func:`rgb` as ``'rgb(r,g,b)'``."""
    return "rgb({},{},{})".format(*rgb(name))
