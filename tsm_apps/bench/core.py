"""The core figures of ``tsm bench``: the shift's overhead (ours and the official op's), online
latency and cache, TSM vs a native I3D and the shift op itself, and on CUDA the shift-cost
figures of :mod:`.shift_cost` (the training loader's figure is training's own:
``tsm_apps.bench.loading``). Each takes
``(quick, device)`` and returns :class:`~tsm_apps.bench.timing.Figure` objects measured side by
side (round-robin; ratios are medians of per-round ratios) in one process; each detail records
the load average around it."""

from __future__ import annotations

import logging
from contextlib import contextmanager
from typing import Iterator

import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from ..models.inflate import I3D
from ..models.online import OnlineRecognizer
from ..models.recognizer import build_recognizer
from ..models.shift import temporal_shift
from ..models.trunk import set_memory_format
from .anchors import GOAL, Side, pair_figure
from .official_shift import NCHW, naive_shift, official_style
from .timing import Figure, load_average, medians, paired_ratio, time_many, time_rounds

log = logging.getLogger(__name__)

CL = torch.channels_last


def _build(shift, arch="resnet50", device="cpu", fmt=None) -> nn.Module:
    torch.manual_seed(0)
    m = build_recognizer(arch, 400, 8, shift)
    if fmt is not None:
        set_memory_format(m.backbone, fmt)
    return m.to(device).eval()


def clip_pair(device: str = "cpu") -> dict:
    """``{"tsm": fn, "tsn": fn}``: one ``(1, 8, 3, 224, 224)`` clip through R-50 offline TSM
    and TSN in the default layout (call under ``torch.no_grad()`` for inference)."""
    tsm, tsn = _build("offline", device=device), _build(None, device=device)
    x = torch.randn(1, 8, 3, 224, 224, device=device)
    return {"tsm": lambda: tsm(x), "tsn": lambda: tsn(x)}


@contextmanager
def frame_pair(device: str = "cpu") -> Iterator[dict]:
    """``{"tsm": fn, "tsn": fn}``: one ``(1, 3, 224, 224)`` frame through R-50 online TSM
    (an :class:`OnlineRecognizer` step, shift buffers carried) and TSN's per-frame forward."""
    tsm, tsn = _build("online", device=device), _build(None, device=device)
    frame = torch.randn(1, 3, 224, 224, device=device)
    with OnlineRecognizer(tsm, mode="eager") as online:  # both eager (graphs: .shift_cost)
        yield {
            "tsm": lambda: online.step(frame),
            "tsn": lambda: tsn.fc(tsn.backbone(frame).mean((2, 3))),
        }


def _ms(times: dict) -> dict:
    return {f"{k}_ms": round(v * 1e3, 2) for k, v in times.items()}


@torch.no_grad()
def shift_overhead(quick: bool, device: str) -> list:
    """TSM/TSN in the default layout (channels-last), R-50 8x224 bs1, inference (autograd off:
    our shift runs in place, the official op copies); and ours vs the official op like for like,
    both eager in the official code's layout (NCHW: the official op never converts)."""
    models = {
        "tsm": _build("offline", device=device),
        "tsn": _build(None, device=device),
        "official_tsm": official_style(_build("offline", device=device)),
        "tsm_nchw": _build("offline", device=device, fmt=NCHW),
        "tsn_nchw": _build(None, device=device, fmt=NCHW),
    }
    x = torch.randn(1, 8, 3, 224, 224, device=device)
    load = load_average()
    rounds = time_rounds(
        {k: (lambda m=m: m(x)) for k, m in models.items()}, 3 if quick else 20, 1, device
    )
    t = medians(rounds)
    d = {
        **_ms(t),
        "official_tsm/tsn_nchw": paired_ratio(rounds, "official_tsm", "tsn_nchw"),
        "tsm/official_tsm (not like for like)": paired_ratio(rounds, "tsm", "official_tsm"),
        "tsn/tsn_nchw": paired_ratio(rounds, "tsn", "tsn_nchw"),
        "load": [load, load_average()],
    }
    r, o = paired_ratio(rounds, "tsm", "tsn"), paired_ratio(rounds, "tsm_nchw", "official_tsm")
    ours, theirs = (
        Side(f"{k} TSM (R50, 8x224)", "eager", "NCHW", "fp32", 1) for k in ("our", "official-op")
    )
    return [
        Figure(
            "shift overhead: TSM/TSN latency (R50, 8x224, bs1, channels-last)",
            r,
            "x",
            "<= 1.03",
            r <= 1.03,
            device,
            d,
        ),
        pair_figure("shift vs official op", ours, theirs, o, GOAL, device, d),
    ]


def _cache(arch: str, device: str) -> Figure:
    m = _build("online", arch, device)
    with OnlineRecognizer(m) as online:
        online.step(torch.randn(1, 3, 224, 224, device=device))
        bufs = online.state.buffers
        claimed = sum(b.numel() * b.element_size() for b in bufs)
        stored = sum(b.untyped_storage().nbytes() for b in bufs)
        cache = online.cache_bytes
    return Figure(
        f"online shift cache ({arch}, 224, fp32, bytes retained)",
        cache / 2**20,
        "MiB",
        "= fold channels' bytes",
        cache == claimed == stored,
        device,
        {"bytes": cache, "fold_bytes": claimed, "storage_bytes": stored, "buffers": len(bufs)},
    )


@torch.no_grad()
def online_latency(quick: bool, device: str) -> list:
    """Per-frame latency of online TSM vs TSN (ResNet-50, 224x224), caches of R-50 and MBv2."""
    with frame_pair(device) as fns:
        load = load_average()
        rounds = time_rounds(fns, 5 if quick else 60, 2, device)
    t = medians(rounds)
    r = paired_ratio(rounds, "tsm", "tsn")
    return [
        Figure(
            "online per-frame latency: TSM/TSN (R50, 224, channels-last)",
            r,
            "x",
            "<= 1.02",
            r <= 1.02,
            device,
            {**_ms(t), "load": [load, load_average()]},
        ),
        _cache("resnet50", device),
        _cache("mobilenetv2", device),
    ]


@torch.no_grad()
def tsm_vs_i3d(quick: bool, device: str) -> list:
    """Throughput of TSM over its native 3-D twin (Conv3d on (N, C, T, H, W), 3x1x1 where TSM
    shifts); the I3D runs in the faster of its two memory formats."""
    tsm = _build("offline", device=device)
    i3d = {
        "i3d": I3D(tsm).to(device).eval(),
        "i3d_cl3d": I3D(tsm, torch.channels_last_3d).to(device).eval(),
    }
    size = 160 if quick else 224
    x = torch.randn(1, 8, 3, size, size, device=device)
    load = load_average()
    t = time_many(
        {"tsm": lambda: tsm(x), **{k: (lambda m=m: m(x)) for k, m in i3d.items()}},
        3 if quick else 10,
        1,
        device,
    )
    r = min(t["i3d"], t["i3d_cl3d"]) / t["tsm"]
    macs = {k: _gmacs(m, x) for k, m in (("tsm", tsm), ("i3d", i3d["i3d"]))}
    return [
        Figure(
            f"TSM vs native I3D throughput (R50, 8x{size})",
            r,
            "x",
            ">= 1.5",
            r >= 1.5,
            device,
            {
                **_ms(t),
                "gmacs": macs,
                "mac_ratio": macs["i3d"] / macs["tsm"],
                "load": [load, load_average()],
            },
        )
    ]


def _gmacs(model: nn.Module, x: torch.Tensor) -> float:
    """Multiply-accumulates of one forward, in billions (torch's FLOP counter / 2)."""
    with FlopCounterMode(display=False) as counter:
        model(x)
    return counter.get_total_flops() / 2e9


def shift_op_speed(quick: bool, device: str) -> list:
    """Forward + backward of ours vs the official op on ResNet-50 layer1-sized activations,
    in NCHW and channels-last (each op keeps its input's layout)."""
    base = torch.randn(8, 256, 56, 56, device=device)
    xs = {fmt: base.clone(memory_format=fmt).requires_grad_() for fmt in (NCHW, CL)}

    def run(fn, x):
        def f():
            fn(x, 8).sum().backward()
            x.grad = None

        return f

    t = time_many(
        {
            "ours_nchw": run(temporal_shift, xs[NCHW]),
            "ours_cl": run(temporal_shift, xs[CL]),
            "official_nchw": run(naive_shift, xs[NCHW]),
            "official_cl": run(naive_shift, xs[CL]),
        },
        10 if quick else 50,
        3,
        device,
    )
    r = t["ours_cl"] / t["official_cl"]
    return [
        Figure(
            "shift op fwd+bwd: ours/official on channels-last input (8x256x56x56)",
            r,
            "x",
            "<= 1.00",
            r <= 1.0,
            device,
            {**_ms(t), "ours/official nchw": t["ours_nchw"] / t["official_nchw"]},
        )
    ]


def cuda_shift_cost(quick: bool, device: str) -> list:
    """On CUDA, the shift-cost figures of :mod:`.shift_cost` (R-50 8x224: batch 1 fp32, batch
    16 bf16, a training step, online per frame); none on the CPU, where the figures above
    stand for them."""
    if torch.device(device).type != "cuda":
        return []
    from .shift_cost import figures as shift_cost_figures

    return shift_cost_figures(quick, device)


FIGURES = (shift_overhead, online_latency, tsm_vs_i3d, shift_op_speed, cuda_shift_cost)


def figures(quick: bool, device: str) -> list:
    """Every core figure on ``device`` (the ``core`` entry of the ``tsm.bench`` group)."""
    out = []
    for fn in FIGURES:
        log.info("%s on %s", fn.__name__, device)
        out += fn(quick, device)
    return out
