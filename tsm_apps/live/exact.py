"""Exact batching on the CPU: a stream's answer in a batch, bit for bit its answer alone.

On the CPU the default kernels are fast but pick their arithmetic by the size of the batch:
oneDNN chooses a kernel per batch size, channels-last convolutions run the whole batch as one
matrix product, and MKL's matrix products round differently with the alignment of their inputs
(a row's place in the batch). A stream's class scores in a batch then differ from its scores
alone in the last bits (ResNet-18 at 64 px: 3e-5 in the features; MobileNetV2: 3e-8 in one
depthwise layer). That is float rounding, not cross-talk, but it hides cross-talk from a test
that wants equality. The exact mode removes every source:

* oneDNN and NNPACK off for the step (:func:`batch_invariant`): PyTorch's native convolution
  computes each sample by itself (NNPACK takes batches of 16 and more);
* the trunk in NCHW (:func:`exact_model`): the native NCHW convolution is one matrix product per
  sample (the channels-last one is one for the whole batch);
* MKL in its strict reproducible mode (``MKL_CBWR=AUTO,STRICT``, read by MKL when it starts:
  :func:`request_strict_mkl` sets it for a process that has not multiplied a matrix yet;
  :func:`check_exact` tells whether it took);
* pooling and classifier a row at a time (the recognizer's stepper).

It costs speed (``tsm bench live`` measures exact against default; docs/results.md has the
figures), so it is a mode: ``BatchedEngine(..., exact=True)``, ``tsm live --exact``.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from typing import Iterator

import torch
from torch import nn

MKL_STRICT = ("MKL_CBWR", "AUTO,STRICT")
_FAST = {"lock": threading.Lock(), "users": 0, "before": (True, True)}


def request_strict_mkl() -> None:
    """Ask for MKL's strict reproducible mode (``MKL_CBWR``) unless the environment says
    otherwise; it takes effect only if MKL has not started in this process yet."""
    os.environ.setdefault(*MKL_STRICT)


@contextmanager
def batch_invariant(device: torch.device) -> Iterator[None]:
    """On the CPU, oneDNN and NNPACK off for the block; elsewhere nothing. The switch is
    process-wide (threads stepping at once share it: both are back when the last one leaves);
    other threads' CPU convolutions inside the block also take PyTorch's native kernels."""
    if torch.device(device).type != "cpu":
        yield
        return
    with _FAST["lock"]:
        if _FAST["users"] == 0:
            _FAST["before"] = (torch.backends.mkldnn.enabled, torch._C._get_nnpack_enabled())
            torch.backends.mkldnn.enabled = False
            torch.backends.nnpack.set_flags(False)
        _FAST["users"] += 1
    try:
        yield
    finally:
        with _FAST["lock"]:
            _FAST["users"] -= 1
            if _FAST["users"] == 0:
                torch.backends.mkldnn.enabled = _FAST["before"][0]
                torch.backends.nnpack.set_flags(_FAST["before"][1])


def exact_model(model: nn.Module) -> nn.Module:
    """Every trunk of ``model`` (a module with a ``memory_format``) in NCHW."""
    from ..models.trunk import set_memory_format

    for m in model.modules():
        if hasattr(m, "memory_format"):
            set_memory_format(m, torch.contiguous_format)
    return model


@torch.no_grad()
def check_exact() -> None:
    """ValueError unless rows of a batch are computed as alone here: a depthwise convolution
    whose rows MKL rounds by their alignment unless its strict mode is on."""
    g = torch.Generator().manual_seed(0)
    w = torch.randn(96, 1, 3, 3, generator=g)
    x = torch.randn(3, 96, 3, 3, generator=g)
    with batch_invariant(torch.device("cpu")):
        batched = torch.nn.functional.conv2d(x, w, padding=1, groups=96)
        alone = [
            torch.nn.functional.conv2d(x[i : i + 1], w, padding=1, groups=96) for i in range(3)
        ]
    if not torch.equal(batched, torch.cat(alone)):
        raise ValueError(
            "exact batching needs MKL's strict mode, set before the process's first matrix "
            f"product: run with {MKL_STRICT[0]}={MKL_STRICT[1]} in the environment"
        )
