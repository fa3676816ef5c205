"""Evaluating a checkpoint over a data set under its test protocol.

Every video goes through :func:`~tsm_apps.evaluation.recognition.predict` (the clip pipeline,
the protocol's views, its fusion). Reported: per video the frames used, the top-5 with names
and probabilities and, when labelled, ``top1_hit`` (the hits that top-1 counts); over the
labelled videos top-1, top-5, mean class accuracy, per-class accuracy and the confusion matrix
(rows = true class). Unlabelled videos get predictions only.
"""

from __future__ import annotations

from typing import Sequence

import torch
from torch import Tensor

from ..data.record import VideoSource
from ..progress import progress_bar
from .metrics import confusion_matrix, per_class_accuracy, topk_correct, topk_hits
from .recognition import Checkpoint, predict

__all__ = ["evaluate", "accuracy"]


def evaluate(ck: Checkpoint, records: Sequence[VideoSource], progress: bool = True) -> dict:
    """Run ``ck``'s protocol over ``records`` (``label`` None: unlabelled; a video is shown by
    its ``name``, else its path)."""
    scores, videos = [], []
    for r in progress_bar(records, desc="tsm test", unit="video", enabled=progress):
        pred = predict(ck, r)
        scores.append(pred.probs)
        videos.append(
            {
                "video": r.name or str(r.path),
                "label": r.label,
                "num_frames": r.num_frames,
                "frames": pred.indices.tolist(),
                "top5": pred.top5,
            }
        )
    out = {
        "videos": len(videos),
        "protocol": ck.protocol.to_dict(),
        "protocol_text": ck.protocol.describe(),
        "predictions": videos,
    }
    labelled = [i for i, r in enumerate(records) if r.label is not None]
    out["labelled"] = len(labelled)
    if labelled:
        stacked = torch.stack([scores[i] for i in labelled])
        labels = torch.tensor([records[i].label for i in labelled])
        out.update(accuracy(stacked, labels, len(ck.names)))
        for i, hit in zip(labelled, topk_hits(stacked, labels, (1, 5))[:, 0].tolist()):
            videos[i]["top1_hit"] = hit
    return out


def accuracy(scores: Tensor, labels: Tensor, k: int) -> dict:
    """Top-1/top-5 (%), mean class accuracy, per-class accuracy and confusion of ``scores
    (N, K)`` against ``labels (N,)``."""
    if int(labels.max()) >= k:
        raise ValueError(f"label {int(labels.max())} in the data but the model has {k} classes")
    c1, c5 = topk_correct(scores, labels, (1, 5))
    cm = confusion_matrix(scores.argmax(1), labels, k)
    per_class = per_class_accuracy(cm)
    n = len(labels)
    return {
        "top1": 100 * c1 / n,
        "top5": 100 * c5 / n,
        "mean_class_accuracy": 100 * float(per_class.nanmean()),
        "per_class_accuracy": [None if v != v else 100 * v for v in per_class.tolist()],
        "confusion": cm.tolist(),
    }
