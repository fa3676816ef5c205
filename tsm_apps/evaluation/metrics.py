"""Classification metrics on logits ``(N, K)`` and labels ``(N,)``: top-k, confusion, per class."""

from __future__ import annotations

from typing import Sequence

import torch
from torch import Tensor


def _check(logits: Tensor, labels: Tensor) -> None:
    if logits.dim() != 2 or labels.dim() != 1 or logits.shape[0] != labels.shape[0]:
        raise ValueError(
            f"expected logits (N, K) and labels (N,), got {tuple(logits.shape)} "
            f"and {tuple(labels.shape)}"
        )


def topk_correct(logits: Tensor, labels: Tensor, ks: Sequence[int] = (1, 5)) -> list:
    """Number of samples whose label is among the top ``k`` logits, per ``k`` (``k`` capped at
    K)."""
    return [int(v) for v in topk_hits(logits, labels, ks).sum(dim=0)]


def topk_hits(logits: Tensor, labels: Tensor, ks: Sequence[int] = (1, 5)) -> Tensor:
    """``(N, len(ks))`` bool: sample ``n``'s label is among its top ``ks[j]`` logits (``k``
    capped at K); :func:`topk_correct` counts them."""
    _check(logits, labels)
    kmax = min(max(ks), logits.shape[1])
    top = logits.topk(kmax, dim=1).indices
    hit = top == labels.view(-1, 1)
    return torch.stack([hit[:, : min(k, kmax)].any(dim=1) for k in ks], dim=1)


def confusion_matrix(pred: Tensor, labels: Tensor, num_classes: int) -> Tensor:
    """``(K, K)`` counts; row = true class, column = predicted class."""
    if pred.shape != labels.shape or pred.dim() != 1:
        raise ValueError(
            f"pred and labels must be (N,), got {tuple(pred.shape)}, {tuple(labels.shape)}"
        )
    idx = labels.long() * num_classes + pred.long()
    return torch.bincount(idx, minlength=num_classes**2).view(num_classes, num_classes)


def per_class_accuracy(confusion: Tensor) -> Tensor:
    """Recall of each class (diagonal / row sum); NaN for classes without samples."""
    rows = confusion.sum(1).double()
    return confusion.diag().double() / rows.where(rows > 0, torch.full_like(rows, float("nan")))


def classification_report(
    confusion: Tensor, loss_sum: float = float("nan"), top5_hits: int | None = None
) -> dict:
    """Percentages from a ``(K, K)`` confusion matrix (row = true class) over ``N`` samples.

    ``{"videos", "loss", "top1", "top5", "mean_class_accuracy", "per_class", "confusion"}``;
    ``per_class[c]`` is ``None`` for a class without samples, ``top5`` ``None`` if not given.
    """
    if confusion.dim() != 2 or confusion.shape[0] != confusion.shape[1]:
        raise ValueError(f"confusion must be (K, K), got {tuple(confusion.shape)}")
    n = int(confusion.sum())
    per_class = per_class_accuracy(confusion)
    return {
        "videos": n,
        "loss": loss_sum / max(n, 1),
        "top1": 100 * float(confusion.diag().sum()) / max(n, 1),
        "top5": None if top5_hits is None else 100 * top5_hits / max(n, 1),
        "mean_class_accuracy": 100 * float(per_class.nanmean()) if n else float("nan"),
        "per_class": [None if v != v else 100 * v for v in per_class.tolist()],
        "confusion": confusion.tolist(),
    }
