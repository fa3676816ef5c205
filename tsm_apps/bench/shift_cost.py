"""What the shift costs where video models run: TSM against TSN at inference (batch 1 fp32;
batch 16 bf16 autocast channels-last), in a training step (forward + backward + SGD) and per
frame online, and our TSM against the official shift re-implemented here (``zeros_like`` + slice
copies, :func:`~tsm_apps.bench.official_shift.naive_shift`) in the same backbone, like for like
(:mod:`tsm_apps.bench.anchors`: both models in one layout, by the same route); each measured
side by side in one process (round-robin, ratios are medians of per-round ratios). On CUDA each also times TSM whose stages write the shifted input in the
previous block's epilogue (``tsm_fused``: :func:`~tsm_apps.models.shift.fuse_residual_shifts`
under ``cuda_shift_path("fused")``), and :func:`epilogue` times that fused op against
``relu(a + b)`` followed by the shift, and against ``relu(a + b)`` alone.

The figures are written for CUDA (``tsm bench --device cuda``: ResNet-50, 8 segments, 224 px;
on CUDA the shift is one Triton kernel and the online step a replayed CUDA graph). Every
function takes a :class:`~tsm_apps.bench.spec.Spec`, so the same code runs on the CPU at small
sizes (the tests).
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import replace

import torch
from torch import nn

from ..models.cuda_graph import GraphedForward
from ..models.online import OnlineRecognizer
from ..models.shift import (
    cuda_shift_path,
    fuse_residual_shifts,
    residual_relu_shift,
    temporal_shift,
)
from .anchors import cuda_anchors, device_routes, official_op_anchors
from .official_shift import NCHW
from .spec import Spec, SpecCast, build, spec_autocast
from .timing import Figure, load_average, medians, paired_ratio, time_rounds


def _wrap(fn, *contexts):
    def run():
        with ExitStack() as stack:
            for c in contexts:
                stack.enter_context(c())
            return fn()

    return run


def _figure(name, rounds, a, b, goal, device, detail) -> Figure:
    r = paired_ratio(rounds, a, b)
    ok = None if goal is None else (r <= float(goal.split()[1]))
    return Figure(name, r, "x", goal, ok, device, detail)


def _ms(rounds: dict) -> dict:
    return {f"{k}_ms": round(v * 1e3, 3) for k, v in medians(rounds).items()}


def _ratios(rounds: dict, pairs) -> dict:
    return {f"{a}/{b}": round(paired_ratio(rounds, a, b), 4) for a, b in pairs}


@torch.no_grad()
def inference(spec: Spec, device: str, goal="<= 1.03", variants: bool | None = None) -> list:
    """TSM/TSN at inference, eager (ours against the official op: :func:`figures`' anchors);
    on CUDA ours is the default
    out-of-place kernel, and the figure's detail adds the in-place pair (``tsm_kernel``), the
    out-of-place kernel named (``tsm_kernel_copy``), no kernel (``tsm_copy``), the shift fused
    into the residual epilogues (``tsm_fused``) and CUDA-graph replays of TSM (default;
    ``tsm_kernel_graph``: the in-place pair; ``tsm_fused_graph``) and TSN (the fixed-protocol
    ``tsm test`` form). ``variants`` (default: on CUDA) adds those models also
    elsewhere (off CUDA they run the CPU path eagerly: a check of the code, not a figure)."""
    models = {
        "tsm": build(spec, "offline", device),
        "tsn": build(spec, None, device),
    }
    for m in models.values():
        m.eval()
    x = torch.randn(spec.batch, spec.segments, 3, spec.size, spec.size, device=device)
    cast = (lambda: spec_autocast(spec, device),)
    fns = {k: _wrap(lambda m=m: m(x), *cast) for k, m in models.items()}
    pairs = [("tsm", "tsn")]
    graphs = {}
    if torch.device(device).type == "cuda" if variants is None else variants:
        for path in ("kernel", "kernel_copy", "copy"):  # in-place pair; out-of-place; no kernel
            fns[f"tsm_{path}"] = _wrap(
                lambda: models["tsm"](x), *cast, lambda p=path: cuda_shift_path(p)
            )
        fused = fuse_residual_shifts(build(spec, "offline", device).eval())
        fns["tsm_fused"] = _wrap(lambda: fused(x), *cast, lambda: cuda_shift_path("fused"))
        for k, model, path in (
            ("tsm", models["tsm"], None),
            ("tsn", models["tsn"], None),
            ("tsm_kernel", models["tsm"], "kernel"),
            ("tsm_fused", fused, "fused"),
        ):
            under = SpecCast(model, spec, device, path).eval()
            graphs[k] = (under, GraphedForward(under))  # the module lives while timed
            fns[f"{k}_graph"] = lambda g=graphs[k][1]: g(x)
        pairs += [
            ("tsm_kernel", "tsn"),
            ("tsm_kernel_copy", "tsn"),
            ("tsm_copy", "tsn"),
            ("tsm_fused", "tsn"),
            ("tsm_fused", "tsm"),
            ("tsm_graph", "tsn_graph"),
            ("tsm_kernel_graph", "tsn_graph"),
            ("tsm_fused_graph", "tsn_graph"),
            ("tsm_graph", "tsm"),
        ]
    load = load_average()
    rounds = time_rounds(fns, spec.rounds, 2, device)
    d = {**_ms(rounds), **_ratios(rounds, pairs), "load": [load, load_average()]}
    return [
        _figure(
            f"shift cost, inference: TSM/TSN ({spec.label})",
            rounds,
            "tsm",
            "tsn",
            goal,
            device,
            d,
        )
    ]


def training_step(spec: Spec, device: str, goal: str = "<= 1.05") -> list:
    """One SGD step (forward + cross-entropy + backward + update) of TSM, TSN and the
    official-op TSM on the same random clips. On CUDA also TSM on the slice copies (no kernel),
    TSM with the shift fused into the residual epilogues (``tsm_fused``) and a second figure:
    TSM/TSN with forward and backward replayed from CUDA graphs
    (``torch.cuda.make_graphed_callables``), the step without launch costs, where a GPU waits
    on its kernels rather than on the host."""
    models = {
        "tsm": build(spec, "offline", device),
        "tsn": build(spec, None, device),
        "official_tsm": build(spec, "offline", device, official=True),
    }
    g = torch.Generator().manual_seed(0)
    x = torch.randn(spec.batch, spec.segments, 3, spec.size, spec.size, generator=g).to(device)
    y = torch.randint(0, spec.classes, (spec.batch,), generator=g).to(device)

    def step_fn(m, graphed: bool = False):
        m.train()
        opt = torch.optim.SGD(m.parameters(), lr=1e-3, momentum=0.9)
        if graphed:  # forward and backward replayed from CUDA graphs, autocast inside them
            forward = torch.cuda.make_graphed_callables(SpecCast(m, spec, device), (x,))
        else:
            forward = SpecCast(m, spec, device)

        def step():
            opt.zero_grad(set_to_none=True)
            loss = nn.functional.cross_entropy(forward(x).float(), y)
            loss.backward()
            opt.step()

        return step

    fns = {k: step_fn(m) for k, m in models.items()}
    pairs = [("tsm", "official_tsm"), ("official_tsm", "tsn")]
    cuda = torch.device(device).type == "cuda"
    if cuda:  # the slice copies of the CPU path; the fused epilogues; the launch-free steps
        fns["tsm_copy"] = _wrap(
            step_fn(build(spec, "offline", device)), lambda: cuda_shift_path("copy")
        )
        fns["tsm_fused"] = _wrap(
            step_fn(fuse_residual_shifts(build(spec, "offline", device))),
            lambda: cuda_shift_path("fused"),
        )
        fns["tsm_graph"] = step_fn(build(spec, "offline", device), graphed=True)
        fns["tsn_graph"] = step_fn(build(spec, None, device), graphed=True)
        pairs += [
            ("tsm_copy", "tsn"),
            ("tsm_fused", "tsn"),
            ("tsm_fused", "tsm"),
            ("tsm_graph", "tsn_graph"),
            ("tsn_graph", "tsn"),
        ]
    load = load_average()
    rounds = time_rounds(fns, spec.rounds, 2, device)
    d = {**_ms(rounds), **_ratios(rounds, pairs), "load": [load, load_average()]}
    out = [
        _figure(
            f"shift cost, training step: TSM/TSN ({spec.label})",
            rounds,
            "tsm",
            "tsn",
            goal,
            device,
            d,
        )
    ]
    if cuda:
        out.append(
            _figure(
                f"shift cost, training step from CUDA graphs: TSM/TSN ({spec.label})",
                rounds,
                "tsm_graph",
                "tsn_graph",
                goal,
                device,
                d,
            )
        )
    return out


def epilogue(spec: Spec, device: str, goal: str = "<= 0.90") -> list:
    """The residual epilogue of a shifted block's predecessor, on ResNet-50's stage-1 output
    ``(batch*segments, 256*width, size/4, size/4)`` in ``spec``'s dtype (fp32 without one),
    channels-last: one launch writing ``relu(a + b)`` and its shift
    (:func:`~tsm_apps.models.shift.residual_relu_shift`, ``fused``) against ``relu(a + b)``
    followed by :func:`~tsm_apps.models.shift.temporal_shift` (``unfused``) and against
    ``relu(a + b)`` alone (``relu_add``: the epilogue TSN runs); forward, and forward +
    backward (``_train``). Off CUDA the op computes the two as written (a check of the code,
    not a figure)."""
    c = max(int(round(256 * spec.width)), 8)
    shape = (spec.batch * spec.segments, c, spec.size // 4, spec.size // 4)
    g = torch.Generator().manual_seed(0)
    a, b, gy, gz = (
        torch.randn(shape, generator=g)
        .to(device, spec.dtype or torch.float32)
        .contiguous(memory_format=torch.channels_last)
        for _ in range(4)
    )
    t = spec.segments

    def fused(a, b):
        return list(residual_relu_shift(a, b, t))

    def unfused(a, b):
        y = torch.relu(a + b)
        return [y, temporal_shift(y, t)]

    def relu_add(a, b):
        return [torch.relu(a + b)]

    def forward(fn):
        return torch.no_grad()(lambda: fn(a, b))

    def train(fn):
        ag, bg = a.detach().requires_grad_(), b.detach().requires_grad_()

        def step():
            outs = fn(ag, bg)
            torch.autograd.backward(outs, [gy, gz][: len(outs)])

        return step

    kinds = {"fused": fused, "unfused": unfused, "relu_add": relu_add}
    fns = {k: forward(fn) for k, fn in kinds.items()}
    fns.update({f"{k}_train": train(fn) for k, fn in kinds.items()})
    load = load_average()
    rounds = time_rounds(fns, spec.rounds, 2, device)
    pairs = [
        ("fused", "unfused"),
        ("fused", "relu_add"),
        ("unfused", "relu_add"),
        ("fused_train", "unfused_train"),
        ("fused_train", "relu_add_train"),
        ("unfused_train", "relu_add_train"),
    ]
    d = {**_ms(rounds), **_ratios(rounds, pairs), "shape": list(shape)}
    d["load"] = [load, load_average()]
    dt = str(a.dtype).replace("torch.", "")
    name = f"shift cost, residual epilogue + shift: fused/unfused ({tuple(shape)}, {dt})"
    return [_figure(name, rounds, "fused", "unfused", goal, device, d)]


class _Frame(nn.Module):
    """TSN's per-frame forward: ``frame (N, 3, H, W) -> logits (N, K)``."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, frame):
        return self.model.fc(self.model.backbone(frame).mean((2, 3)))


@torch.no_grad()
def online_step(spec: Spec, device: str, goal: str = "<= 1.02") -> list:
    """Online TSM per frame against TSN's 2-D frame, both eager, and both replayed from CUDA
    graphs on CUDA (the form :class:`OnlineRecognizer` uses there by default; the goal is for
    that form). Elsewhere the second form is the static-buffer step against TSN's eager frame.
    Two copies of the TSM model stream side by side, one per mode."""
    frame = torch.randn(spec.batch, 3, spec.size, spec.size, device=device)
    tsn = _Frame(build(spec, None, device).eval())
    fast = "graph" if torch.device(device).type == "cuda" else "static"
    with ExitStack() as stack:
        graphed = GraphedForward(tsn)  # eager off CUDA
        fns = {"tsn_eager": lambda: tsn(frame), f"tsn_{fast}": lambda: graphed(frame)}
        for mode in ("eager", fast):
            rec = stack.enter_context(
                OnlineRecognizer(build(spec, "online", device).eval(), mode=mode)
            )
            fns[f"tsm_{mode}"] = lambda rec=rec: rec.step(frame)
        load = load_average()
        rounds = time_rounds(fns, spec.rounds, 3, device)
    pairs = [
        ("tsm_eager", "tsn_eager"),
        (f"tsm_{fast}", f"tsn_{fast}"),
        (f"tsm_{fast}", "tsn_eager"),
        (f"tsm_{fast}", "tsm_eager"),
    ]
    return [
        _figure(
            f"shift cost, online per frame: TSM/TSN frame ({spec.label}, {fast})",
            rounds,
            f"tsm_{fast}",
            f"tsn_{fast}",
            goal,
            device,
            {**_ms(rounds), **_ratios(rounds, pairs), "load": [load, load_average()]},
        )
    ]


def cuda_specs(quick: bool) -> dict:
    """The CUDA settings: R-50 8x224; batch 1 fp32 in NCHW (the official code's layout; the
    core figures time the default channels-last), batch 16 bf16 and the training step (batch
    8, bf16) channels-last; online per frame batch 1 fp32 for R-50 and MobileNetV2; the fused
    epilogue on the stage-1 output at batch 16 bf16."""
    r = 10 if quick else 50
    return {
        "inference_bs1": Spec(batch=1, fmt=NCHW, rounds=r),
        "inference_bs16": Spec(batch=16, dtype=torch.bfloat16, rounds=r),
        "training": Spec(batch=8, dtype=torch.bfloat16, rounds=max(5, r // 2)),
        "online_r50": Spec(rounds=3 * r),
        "online_mbv2": Spec(arch="mobilenetv2", rounds=3 * r),
        "epilogue": Spec(batch=16, dtype=torch.bfloat16, rounds=3 * r),
        "anchors": cuda_anchors(quick),
    }


def figures(quick: bool, device: str, specs: dict | None = None) -> list:
    """Every figure of this module at ``specs`` (default :func:`cuda_specs`)."""
    s = specs or cuda_specs(quick)
    out = []
    out += inference(s["inference_bs1"], device)
    out += inference(s["inference_bs16"], device)
    out += training_step(s["training"], device)
    out += online_step(s["online_r50"], device)
    out += online_step(s["online_mbv2"], device)
    out += epilogue(s["epilogue"], device)
    for what, spec in s["anchors"]:
        out += official_op_anchors(spec, device, device_routes(device), what)
    return out


def tiny_specs() -> dict:
    """Small settings for the CPU (tests): ResNet-18 at 1/8 width, 32 px, 4 segments."""
    base = Spec(arch="resnet18", segments=4, size=32, width=0.125, classes=5, rounds=2)
    return {
        "inference_bs1": replace(base, fmt=NCHW),
        "inference_bs16": replace(base, batch=2, dtype=torch.bfloat16),
        "training": replace(base, batch=2),
        "online_r50": base,
        "online_mbv2": replace(base, arch="mobilenetv2", width=0.25),
        "epilogue": replace(base, batch=2, dtype=torch.bfloat16),
        "anchors": (
            ("official op in its own layout", replace(base, fmt=NCHW)),
            ("official op on channels-last", replace(base, batch=2, dtype=torch.bfloat16)),
        ),
    }
