"""Sanity check for saliency maps (Adebayo et al. 2018): maps of a model whose weights are
randomised should no longer find the actor, and should not resemble the trained model's maps.

:func:`randomized_copy` re-initialises every parameter of a deep copy of the model (conv/linear
weights with Kaiming-normal, biases to zero, norm layers to identity), seeded; batch-norm running
statistics are reset so the copy computes plausible activations in eval mode.
"""

from __future__ import annotations

import copy
from typing import Optional

import numpy as np
import torch
from torch import nn


def randomized_copy(model: nn.Module, seed: int = 0) -> nn.Module:
    """A deep copy of ``model`` with all weights re-drawn (seeded); ``model`` is untouched."""
    clone = copy.deepcopy(model)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in clone.modules():
            if isinstance(m, (nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.Linear)):
                fan_in = m.weight[0].numel()
                m.weight.copy_(torch.randn(m.weight.shape, generator=gen) * (2.0 / fan_in) ** 0.5)
                if m.bias is not None:
                    m.bias.zero_()
            elif isinstance(m, nn.modules.batchnorm._NormBase):
                if m.affine:
                    m.weight.fill_(1.0)
                    m.bias.zero_()
                if m.track_running_stats:
                    m.reset_running_stats()
    return clone


def rank_correlation(a: np.ndarray, b: np.ndarray) -> Optional[float]:
    """Spearman rank correlation of two equally shaped maps (``None`` if one is constant)."""
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    if a.shape != b.shape:
        raise ValueError(f"maps must have the same size, got {a.size} and {b.size}")
    ra, rb = _ranks(a), _ranks(b)
    if ra.std() == 0 or rb.std() == 0:
        return None
    return float(np.corrcoef(ra, rb)[0, 1])


def _ranks(x: np.ndarray) -> np.ndarray:
    """Average ranks (ties share the mean of their positions)."""
    order = np.argsort(x, kind="stable")
    ranks = np.empty(x.size)
    ranks[order] = np.arange(x.size)
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, weights=ranks)
    return (sums / counts)[inverse]
