"""Like-for-like anchors of ``tsm bench``: ours against the official code, both sides run the
same way.

A :class:`Side` says how one side of a pair runs: its route (``eager``; ``graph``: replayed from
a CUDA graph; ``compiled:<backend>``: ``torch.compile`` with that backend; ``onnxruntime:<provider>``),
its layout, dtype and batch. :func:`like_for_like` holds when both sides share all four, and
:func:`pair_figure` names both sides in the figure and gives it a goal and a "met" only then: an
unlike pair is printed as "NOT like for like", with neither.

:func:`official_op_anchors` times our TSM against the same recognizer running the official op
(:func:`~tsm_apps.bench.official_shift.naive_shift`), both models wholly in the spec's layout
(input, trunk and op: the official op never converts), and TSN beside them, by each route.
:func:`cuda_anchors` is the table ``tsm bench --device cuda`` runs: the official op in its own
layout (NCHW) and on channels-last.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable

import torch
from torch import nn

from ..models.cuda_graph import GraphedForward
from .official_shift import NCHW
from .spec import Spec, SpecCast, build
from .timing import Figure, load_average, medians, meets, paired_ratio, time_rounds

GOAL = "<= 1.00"  # ours no slower than the official code run the same way
ROUTES = ("eager", "graph", "compiled")


@dataclass(frozen=True)
class Side:
    """One side of a pair: ``model`` run by ``route`` in ``layout`` and ``dtype`` at ``batch``."""

    model: str
    route: str
    layout: str
    dtype: str
    batch: int

    def __post_init__(self) -> None:
        if self.route.split(":")[0] not in ROUTES + ("onnxruntime",):
            raise ValueError(f"unknown route {self.route!r} of {self.model!r}")

    @property
    def label(self) -> str:
        return f"{self.model} [{self.route}, {self.layout}, {self.dtype}, bs{self.batch}]"


def like_for_like(a: Side, b: Side) -> bool:
    """Whether ``a`` and ``b`` run by the same route in the same layout, dtype and batch."""
    return (a.route, a.layout, a.dtype, a.batch) == (b.route, b.layout, b.dtype, b.batch)


def pair_figure(
    title: str, ours: Side, theirs: Side, value: float, goal: str | None, device: str, detail: dict
) -> Figure:
    """``ours / theirs`` as a figure naming both sides; the goal and "met" only when the pair
    is like for like (otherwise both are None and the name says so)."""
    like = like_for_like(ours, theirs)
    mark = "like for like" if like else "NOT like for like"
    name = f"{title}: {ours.label} / {theirs.label}, {mark}"
    detail = {**detail, "like_for_like": like, "ours": asdict(ours), "theirs": asdict(theirs)}
    goal = goal if like else None
    return Figure(name, value, "x", goal, meets(value, goal) if like else None, device, detail)


def spec_side(model: str, spec: Spec, route: str) -> Side:
    """The :class:`Side` of ``model`` run by ``route`` at ``spec``."""
    dtype = str(spec.dtype).replace("torch.", "") if spec.dtype else "fp32"
    layout = "NCHW" if spec.fmt == NCHW else "channels-last"
    return Side(model, route, layout, dtype, spec.batch)


def routed(model: nn.Module, spec: Spec, device: str, route: str, x: torch.Tensor) -> Callable:
    """``model(x)`` under ``spec``'s autocast as a call of ``route``: ``eager``, ``graph`` (a
    replayed CUDA graph; ValueError off CUDA) or ``compiled:<backend>``."""
    under = SpecCast(model, spec, device).eval()
    kind, _, backend = route.partition(":")
    if kind == "eager" and not backend:
        return lambda: under(x)
    if kind == "graph" and not backend:
        if torch.device(device).type != "cuda":
            raise ValueError(f"route 'graph' needs a CUDA device, got {device!r}")
        graph = GraphedForward(under)
        return lambda: (under, graph(x))[1]  # the closure keeps the weakly held module alive
    if kind == "compiled" and backend:
        compiled = torch.compile(under, backend=backend, dynamic=False)
        return lambda: compiled(x)
    raise ValueError(f"unknown route {route!r}: eager, graph or compiled:<backend>")


@torch.no_grad()
def official_op_anchors(
    spec: Spec, device: str, routes: tuple, what: str = "official-op anchor", goal: str = GOAL
) -> list:
    """Per route, our TSM / the official-op TSM (and TSN beside them, in the detail), the
    three models in ``spec``'s layout and dtype, timed round-robin by that route."""
    models = {
        "ours": build(spec, "offline", device),
        "official": build(spec, "offline", device, official=True),
        "tsn": build(spec, None, device),
    }
    x = torch.randn(spec.batch, spec.segments, 3, spec.size, spec.size, device=device)
    title = f"{what} ({spec.arch}, {spec.segments}x{spec.size})"
    out = []
    for route in routes:
        fns = {k: routed(m.eval(), spec, device, route, x) for k, m in models.items()}
        load = load_average()
        rounds = time_rounds(fns, spec.rounds, 2, device)
        detail = {f"{k}_ms": round(v * 1e3, 3) for k, v in medians(rounds).items()}
        for a, b in (("ours", "tsn"), ("official", "tsn")):
            detail[f"{a}/{b}"] = round(paired_ratio(rounds, a, b), 4)
        detail["load"] = [load, load_average()]
        ours, theirs = spec_side("ours TSM", spec, route), spec_side("official-op TSM", spec, route)
        value = paired_ratio(rounds, "ours", "official")
        out.append(pair_figure(title, ours, theirs, value, goal, device, detail))
    return out


def cuda_anchors(quick: bool) -> tuple:
    """``((what, spec), ...)`` of ``tsm bench --device cuda`` (R-50, 8x224): the official op
    in its own layout (the whole model NCHW) at batch 1 fp32 and batch 16 bf16 autocast, and
    on channels-last (no conversion) at batch 16 bf16, each by every route."""
    r = 10 if quick else 50
    return (
        ("official op in its own layout", Spec(batch=1, fmt=NCHW, rounds=r)),
        ("official op in its own layout", Spec(batch=16, dtype=torch.bfloat16, fmt=NCHW, rounds=r)),
        ("official op on channels-last", Spec(batch=16, dtype=torch.bfloat16, rounds=r)),
    )


def device_routes(device: str) -> tuple:
    """The routes run on ``device``: on CUDA eager, graph and ``compiled:inductor``; elsewhere
    eager only (no CUDA graph; a compiled CPU figure says nothing of the GPU)."""
    if torch.device(device).type == "cuda":
        return ("eager", "graph", "compiled:inductor")
    return ("eager",)
