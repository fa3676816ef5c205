"""One measured recognizer setting of the benchmarks and the models built for it.

:class:`Spec`: ``batch`` clips ``(N, T, 3, H, W)`` of ``segments`` frames of ``size`` px, the
backbone's memory format and the autocast dtype. :func:`build` builds a recognizer of a spec
(seed 0; with the official shift op if asked), :func:`spec_autocast` enters its autocast and
:class:`SpecCast` wraps a model so a CUDA graph captures the casts and a CUDA shift path. Used by
the shift-cost figures (:mod:`tsm_apps.bench.shift_cost`) and the benchmarks beside them.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass

import torch
from torch import nn

from ..models.recognizer import build_recognizer
from ..models.shift import cuda_shift_path
from ..models.trunk import set_memory_format
from .official_shift import official_style

CL = torch.channels_last


@dataclass(frozen=True)
class Spec:
    """One measured setting: ``batch`` clips of ``segments`` frames of ``size`` px."""

    arch: str = "resnet50"
    batch: int = 1
    segments: int = 8
    size: int = 224
    width: float = 1.0
    classes: int = 400
    fmt: torch.memory_format = CL
    dtype: torch.dtype | None = None  # autocast dtype (None: fp32)
    rounds: int = 20

    @property
    def label(self) -> str:
        dt = str(self.dtype).replace("torch.", "") if self.dtype else "fp32"
        fmt = "channels-last" if self.fmt == CL else "NCHW"
        return f"{self.arch}, {self.segments}x{self.size}, bs{self.batch}, {dt}, {fmt}"


def build(spec: Spec, shift, device: str, official: bool = False) -> nn.Module:
    """The recognizer of ``spec`` (seed 0) on ``device`` in ``spec.fmt``; ``official``: every
    offline shift runs the official op, which keeps its input's layout: the whole model (input,
    trunk and op) runs in ``spec.fmt``."""
    torch.manual_seed(0)
    m = build_recognizer(spec.arch, spec.classes, spec.segments, shift, width=spec.width)
    if official:
        official_style(m)
    set_memory_format(m.backbone, spec.fmt)
    return m.to(device)


def spec_autocast(spec: Spec, device: str, cache: bool = True):
    """``spec``'s autocast (``cache=False`` inside captured graphs, as CUDA graphs require)."""
    if spec.dtype is None:
        return nullcontext()
    return torch.autocast(torch.device(device).type, dtype=spec.dtype, cache_enabled=cache)


class SpecCast(nn.Module):
    """``model`` under ``spec``'s autocast and, if given, the CUDA shift ``path`` (so a graph
    captures the casts and that path's kernels)."""

    def __init__(self, model: nn.Module, spec: Spec, device: str, path: str | None = None) -> None:
        super().__init__()
        self.model, self.spec, self.device, self.path = model, spec, device, path

    def forward(self, x):
        with (
            spec_autocast(self.spec, self.device, cache=False),
            nullcontext() if self.path is None else cuda_shift_path(self.path),
        ):
            return self.model(x)
