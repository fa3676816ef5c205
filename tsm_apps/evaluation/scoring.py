"""Scores of a clip's views: the network's logits, the protocol's fusion, the top-k.

Layouts: views ``(V, T, C, S, S)`` (:class:`~tsm_apps.data.pipeline.ClipViews`), logits
``(V, K)``, probabilities ``(K,)`` float64. Fusion ``"logits"`` (official ``test_models.py``:
``rst.mean`` over views) is the softmax of the mean logits; ``"prob"`` (mmaction2
``average_clips='prob'``) is the mean of the views' softmax.
"""

from __future__ import annotations

from typing import Sequence

import torch
from torch import Tensor, nn

from ..models.cuda_graph import graphed

__all__ = ["view_logits", "fuse_views", "top_k"]


@torch.no_grad()
def view_logits(model: nn.Module, views: Tensor, batch: int = 8) -> Tensor:
    """``(V, K)`` float32 logits of ``views (V, T, C, S, S)``, ``batch`` views per forward, on
    the model's device (the model is put in eval mode; ``num_segments`` set to ``T``; on CUDA
    each batch shape is captured once into a CUDA graph and replayed)."""
    if views.dim() != 5:
        raise ValueError(f"views must be (V, T, C, S, S), got {tuple(views.shape)}")
    model.eval()
    model.num_segments = views.shape[1]
    first = next(model.parameters(), None)  # an engine (tsm_apps.engine) has none: CPU input
    device = first.device if first is not None else torch.device("cpu")
    run = graphed(model)  # on CUDA: replayed from a CUDA graph per batch shape
    out = [run(views[i : i + batch].to(device)).float().cpu() for i in range(0, len(views), batch)]
    return torch.cat(out)


def fuse_views(logits: Tensor, fusion: str = "logits") -> Tensor:
    """``(K,)`` float64 probabilities of the views' ``logits (V, K)`` (module docstring)."""
    if logits.dim() != 2:
        raise ValueError(f"logits must be (V, K), got {tuple(logits.shape)}")
    x = logits.double()
    if fusion == "logits":
        return torch.softmax(x.mean(0), 0)
    if fusion == "prob":
        return torch.softmax(x, 1).mean(0)
    raise ValueError(f"fusion must be 'logits' or 'prob', got {fusion!r}")


def top_k(probs: Tensor, names: Sequence[str] = (), k: int = 5) -> list:
    """``[{"index", "name", "prob"}]`` of the ``k`` most probable classes of ``probs (K,)``,
    most probable first (ties: the lower index first)."""
    p = torch.as_tensor(probs).double().flatten()
    order = sorted(range(p.numel()), key=lambda i: (-float(p[i]), i))[: min(k, p.numel())]
    return [
        {"index": int(i), "name": names[i] if names else f"class {i}", "prob": float(p[i])}
        for i in order
    ]
