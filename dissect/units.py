"""Unit dissection in the spirit of Network Dissection (Bau et al. 2017), with the actor as the
one concept.

For every unit ``k`` of a layer: the top-quantile level ``T_k`` with ``P(a_k > T_k) = quantile``
over all positions of the dataset's low-resolution activations; each activation map is
bilinearly upsampled to the mask resolution and binarised with ``T_k``; the unit's score is the
dataset-level IoU ``sum |M_k & L| / sum |M_k | L|`` against the actor masks ``L``. A unit whose
IoU exceeds ``min_iou`` is a detector unit.

Layouts: activations ``(M, C, h, w)`` (``M`` frames, e.g. ``N*T`` rows of a trunk layer), masks
``(M, H, W)`` bool.
"""

from __future__ import annotations

from typing import Dict, List, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

ND_QUANTILE = 0.005
"""Top quantile of each unit's activations kept as its mask (the Network Dissection value)."""
ND_MIN_IOU = 0.04
"""IoU above which a unit counts as a detector (the Network Dissection value)."""
MOBILENET_STAGE_ENDS = (3, 6, 13, 18)


def unit_thresholds(acts: np.ndarray, quantile: float = ND_QUANTILE) -> np.ndarray:
    """``(M, C, h, w)`` -> ``(C,)`` levels ``T_k``: the ``1 - quantile`` quantile of unit ``k``."""
    acts = np.asarray(acts)
    if acts.ndim != 4:
        raise ValueError(f"activations must be (M, C, h, w), got shape {acts.shape}")
    if not 0 < quantile < 1:
        raise ValueError(f"quantile must be in (0, 1), got {quantile}")
    per_unit = acts.transpose(1, 0, 2, 3).reshape(acts.shape[1], -1)
    return np.quantile(per_unit, 1 - quantile, axis=1)


def unit_counts(
    acts: np.ndarray, masks: np.ndarray, thresholds: np.ndarray, chunk: int = 8
) -> tuple:
    """``(intersection, union)`` pixel counts ``(C,)`` float64 of every unit's upsampled,
    thresholded maps with ``masks`` (integers: sums over processes are exact)."""
    acts, masks = np.asarray(acts, np.float32), np.asarray(masks, bool)
    if acts.ndim != 4 or masks.ndim != 3 or masks.shape[0] != acts.shape[0]:
        raise ValueError(
            f"expected activations (M, C, h, w) and masks (M, H, W) with the same M, "
            f"got {acts.shape} and {masks.shape}"
        )
    size = masks.shape[1:]
    thr = torch.as_tensor(np.asarray(thresholds, np.float32))[None, :, None, None]
    inter = torch.zeros(acts.shape[1], dtype=torch.float64)
    union = torch.zeros_like(inter)
    for i in range(0, acts.shape[0], chunk):
        a = F.interpolate(
            torch.from_numpy(acts[i : i + chunk]), size=size, mode="bilinear", align_corners=False
        )
        m = a > thr
        gt = torch.from_numpy(masks[i : i + chunk])[:, None]
        inter += (m & gt).sum(dim=(0, 2, 3)).double()
        union += (m | gt).sum(dim=(0, 2, 3)).double()
    return inter.numpy(), union.numpy()


def ious_from_counts(inter: np.ndarray, union: np.ndarray) -> np.ndarray:
    """IoU per unit; 0 where the union is empty."""
    return np.where(union > 0, inter / np.maximum(union, 1), 0.0)


def unit_ious(
    acts: np.ndarray, masks: np.ndarray, thresholds: np.ndarray, chunk: int = 8
) -> np.ndarray:
    """Dataset-level IoU of every unit's upsampled, thresholded maps with ``masks``: ``(C,)``."""
    return ious_from_counts(*unit_counts(acts, masks, thresholds, chunk))


def layer_record(iou: np.ndarray, thr: np.ndarray, quantile: float, min_iou: float) -> dict:
    """One layer's result: ``{"units", "detectors" (units with IoU above ``min_iou``), "iou",
    "thresholds", "quantile", "min_iou"}`` from per-unit ``iou`` and thresholds ``thr``."""
    return {
        "units": int(iou.size),
        "detectors": int((iou > min_iou).sum()),
        "iou": [float(v) for v in iou],
        "thresholds": [float(v) for v in thr],
        "quantile": quantile,
        "min_iou": min_iou,
    }


def dissect_layer(
    acts: np.ndarray, masks: np.ndarray, quantile: float = ND_QUANTILE, min_iou: float = ND_MIN_IOU
) -> dict:
    """Score one layer: ``{"units", "detectors", "iou" (per unit), "thresholds"}``."""
    thr = unit_thresholds(acts, quantile)
    iou = unit_ious(acts, masks, thr)
    return layer_record(iou, thr, quantile, min_iou)


def default_unit_layers(model: nn.Module) -> List[str]:
    """Stage outputs of a recognizer's trunk: ``backbone.layer1..4`` (ResNet) or the ends of
    MobileNetV2's resolution stages."""
    names = {n for n, _ in model.named_modules()}
    resnet = [f"backbone.layer{i}" for i in range(1, 5)]
    if all(n in names for n in resnet):
        return resnet
    mobile = [f"backbone.features.{i}" for i in MOBILENET_STAGE_ENDS]
    if all(n in names for n in mobile):
        return mobile
    raise ValueError(f"no default dissection layers for {type(model).__name__}; pass layers")


def frame_rows_for(masks: np.ndarray, rows: int) -> np.ndarray:
    """Masks ``(T, H, W)`` of one clip matched to ``rows`` activation steps (``T`` or ``T//k``
    after temporal pooling: the first frame of each pooled group)."""
    t = masks.shape[0]
    if rows == t:
        return masks
    if rows == 0 or t % rows:
        raise ValueError(f"cannot match {rows} activation steps to {t} frames")
    return masks[:: t // rows]


class UnitCollector:
    """Accumulates per-layer activations ``(T', C, h, w)`` and actor masks clip by clip."""

    def __init__(self, layers: Sequence[str]) -> None:
        self.layers = list(layers)
        self.acts: Dict[str, list] = {n: [] for n in self.layers}
        self.masks: Dict[str, list] = {n: [] for n in self.layers}

    def add(self, activations: Dict[str, torch.Tensor], masks: np.ndarray) -> None:
        """``activations[name]``: one clip's ``(T', C, h, w)``; ``masks``: ``(T, H, W)``."""
        for name in self.layers:
            a = activations[name].detach().float().cpu().numpy()
            self.acts[name].append(a)
            self.masks[name].append(frame_rows_for(masks, a.shape[0]))

    def __len__(self) -> int:
        return len(self.acts[self.layers[0]]) if self.layers else 0

    def result(self, quantile: float = ND_QUANTILE, min_iou: float = ND_MIN_IOU) -> dict:
        """``{layer: dissect_layer(...)}`` over everything added."""
        if not len(self):
            raise ValueError("unit dissection needs at least one clip")
        return {
            n: dissect_layer(
                np.concatenate(self.acts[n]), np.concatenate(self.masks[n]), quantile, min_iou
            )
            for n in self.layers
        }
