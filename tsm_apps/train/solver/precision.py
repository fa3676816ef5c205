"""The training step's precision: whether it runs under autocast, in which dtype, and whether
its loss is scaled (a ``GradScaler``), decided from the optimisation config and the device.

fp16 has a narrow exponent range, so its small gradients underflow unless the loss is scaled
up first; bf16 has fp32's exponent range and needs no scaling. Mixed precision stays CUDA
only: on any other device the step runs in fp32.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import torch

from .config import AMP_DTYPES, OptimConfig

DTYPES = dict(zip(AMP_DTYPES, (torch.float16, torch.bfloat16)))  # --amp-dtype name -> dtype


class Precision(NamedTuple):
    """``enabled``: the step runs under autocast; ``dtype``: autocast's dtype (``None`` when
    off); ``scale``: the loss is scaled (``torch.amp.GradScaler`` enabled)."""

    enabled: bool
    dtype: Optional[torch.dtype]
    scale: bool


def step_precision(optim: OptimConfig, device: torch.device) -> Precision:
    """The step's precision: ``optim.amp`` on a CUDA ``device`` is autocast in
    ``optim.amp_dtype``, the loss scaled for fp16 only; anything else is fp32, unscaled."""
    if not (optim.amp and torch.device(device).type == "cuda"):
        return Precision(False, None, False)
    return Precision(True, DTYPES[optim.amp_dtype], optim.amp_dtype == "fp16")
