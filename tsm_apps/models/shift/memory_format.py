"""Which memory format a 4-D activation ``(N, C, H, W)`` is stored in."""

from __future__ import annotations

import torch
from torch import Tensor


def is_channels_last(x: Tensor) -> bool:
    """True when the 4-D ``x`` is channels-last in memory and not plain contiguous."""
    return not x.is_contiguous() and x.is_contiguous(memory_format=torch.channels_last)
