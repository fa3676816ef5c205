"""ImageNet-VID detection mAP in pure numpy: the devkit's relaxed IoU threshold, VOC all-point
AP, FGFA's slow/medium/fast motion split and the synthetic set's corrupted-frame split.

Boxes are ``(N, 4)`` float ``[x1, y1, x2, y2]`` in original-image pixel *edge* coordinates, so a
box's width is ``x2 - x1`` (no ``+ 1``). The devkit (``eval_vid_detection.m``, and FGFA's
``imagenet_vid_eval_motion.py``) works on inclusive integer boxes and adds 1 to every width and
height; :class:`detection.vid_dataset.ImageNetVIDDataset` stores an XML box ``xmin..xmax`` as
``[xmin, xmax + 1]``, so the widths, IoUs and thresholds computed here equal the devkit's.

Rules (as the devkit / FGFA code):

* a ground-truth box of width ``w`` and height ``h`` is matched by a detection of its class
  with IoU >= ``min(0.5, w*h / ((w+10)*(h+10)))``;
* detections of a frame are taken by descending score; each takes the still-unmatched GT of its
  class with the largest IoU above that GT's threshold (greedy); ties in score keep input order;
* per class, detections of all frames are ranked by score; AP is the area under the monotone
  precision envelope (VOC all-point); classes without positives are left out of the mean;
* splits (motion ranges, ``ignore`` flags): GT outside the split is *ignored*: it is not a
  positive, and a detection matched to it is neither TP nor FP. A detection matched to nothing is
  a FP of weight 1 when the GT it overlaps most is in the split, 0 when that GT is ignored, and on
  a tie (typically no overlap at all) the fraction of the frame's GT that is ignored, or, in a
  frame without GT, the fraction of all GT that is in the split (FGFA's code, kept as is so that
  numbers compare with published ones).
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

import numpy as np

from tsm_apps.data.motion import box_iou, motion_class

from .records import FrameDetections, FrameTruth, as_boxes

PIXEL_TOLERANCE = 10.0
DEFAULT_IOU = 0.5
SPLIT_KEYS = ("mAP", "mAP_slow", "mAP_medium", "mAP_fast", "mAP_corrupted")


def _f64(boxes: np.ndarray) -> np.ndarray:
    """Boxes in float64: IoUs and thresholds are computed in double precision."""
    return np.asarray(boxes, np.float64)


def vid_iou_threshold(
    gt_boxes: np.ndarray, default: float = DEFAULT_IOU, tolerance: float = PIXEL_TOLERANCE
) -> np.ndarray:
    """Per-GT IoU threshold ``min(default, w*h / ((w+tol)*(h+tol)))``, shape ``(G,)``."""
    g = _f64(as_boxes(gt_boxes, "vid_iou_threshold"))
    w, h = g[:, 2] - g[:, 0], g[:, 3] - g[:, 1]
    return np.minimum(default, (w * h) / ((w + tolerance) * (h + tolerance)))


def voc_ap(recall: np.ndarray, precision: np.ndarray) -> float:
    """VOC all-point AP: area under the monotone (right-to-left max) precision envelope."""
    mrec = np.concatenate(([0.0], np.asarray(recall, np.float64), [1.0]))
    mpre = np.concatenate(([0.0], np.asarray(precision, np.float64), [0.0]))
    mpre = np.maximum.accumulate(mpre[::-1])[::-1]
    step = np.flatnonzero(mrec[1:] != mrec[:-1])
    return float(np.sum((mrec[step + 1] - mrec[step]) * mpre[step + 1]))


def same_class(det: FrameDetections, truth: FrameTruth) -> np.ndarray:
    """``(K, G)`` bool: detection ``k`` and ground-truth box ``g`` are of the same class, by
    name when both records carry names (their class lists may differ), else by class index."""
    if det.labels and truth.labels:
        return np.asarray(det.labels, object)[:, None] == np.asarray(truth.labels, object)[None, :]
    return det.label_ids[:, None] == truth.label_ids[None, :]


def match_frame(
    det: FrameDetections,
    truth: FrameTruth,
    counted: np.ndarray,
    empty_weight: float = 1.0,
    iou: Optional[np.ndarray] = None,
) -> tuple[np.ndarray, np.ndarray]:
    """TP and FP weights ``(K,)`` of one frame's detections, in the order of ``det``.

    ``counted (G,)`` bool: GT boxes inside the split (the others are ignored, see the module
    docstring); ``empty_weight``: FP weight of an unmatched detection in a frame without GT.
    """
    k, g = len(det.scores), len(truth.label_ids)
    ov = box_iou(_f64(det.boxes), _f64(truth.boxes)) if iou is None else iou
    tp, fp = np.zeros(k), np.zeros(k)
    if k == 0:
        return tp, fp
    thr = vid_iou_threshold(truth.boxes)
    eligible = (ov >= thr[None, :]) & same_class(det, truth)
    ignored = ~counted
    ov_ig = np.where(ignored[None, :], ov, -1.0).max(axis=1, initial=-1.0)
    ov_in = np.where(counted[None, :], ov, -1.0).max(axis=1, initial=-1.0)
    tie = empty_weight if g == 0 else float(ignored.mean())
    unmatched_fp = np.where(ov_in > ov_ig, 1.0, np.where(ov_ig > ov_in, 0.0, tie))
    fp[:] = unmatched_fp
    taken = np.zeros(g, bool)
    order = np.argsort(-_f64(det.scores), kind="stable")
    for j in order[eligible[order].any(axis=1)]:  # only detections that can match
        cand = eligible[j] & ~taken
        if cand.any():
            best = int(np.argmax(np.where(cand, ov[j], -1.0)))
            taken[best] = True
            tp[j], fp[j] = (1.0 if counted[best] else 0.0), 0.0
    return tp, fp


def found_truth(det: FrameDetections, truth: FrameTruth) -> np.ndarray:
    """``(G,)`` bool: the ground-truth boxes of a frame that ``det`` finds under the rule of
    :func:`match_frame` (greedy by score, same class, IoU >= the per-GT threshold)."""
    found = np.zeros(len(truth.label_ids), bool)
    if not len(found) or not len(det.scores):
        return found
    ov = box_iou(_f64(det.boxes), _f64(truth.boxes))
    ok = (ov >= vid_iou_threshold(truth.boxes)[None, :]) & same_class(det, truth)
    for j in np.argsort(-_f64(det.scores), kind="stable"):
        cand = ok[j] & ~found
        if cand.any():
            found[int(np.argmax(np.where(cand, ov[j], -1.0)))] = True
    return found


def class_aps(
    scores: np.ndarray, labels: np.ndarray, tp: np.ndarray, fp: np.ndarray, npos: np.ndarray
) -> np.ndarray:
    """Per-class AP ``(C,)`` (fraction, NaN for a class without positives) from the pooled
    detections' ``scores``, ``labels``, TP/FP weights ``(D,)`` and positives per class ``(C,)``."""
    order = np.argsort(-scores, kind="stable")
    labels, tp, fp = labels[order], tp[order], fp[order]
    out = np.full(len(npos), np.nan)
    for c in np.flatnonzero(npos > 0):
        sel = labels == c
        ctp, cfp = np.cumsum(tp[sel]), np.cumsum(fp[sel])
        prec = ctp / np.maximum(ctp + cfp, np.finfo(np.float64).eps)
        out[c] = voc_ap(ctp / npos[c], prec)
    return out


def _check_labels(labels: np.ndarray, num_classes: int, what: str) -> None:
    if labels.size and (labels.min() < 0 or labels.max() >= num_classes):
        raise ValueError(
            f"{what}: labels must be in [0, {num_classes}), got [{labels.min()}, {labels.max()}]"
        )


def split_aps(
    detections: Mapping[str, FrameDetections],
    ground_truth: Mapping[str, FrameTruth],
    num_classes: int,
    frames: Sequence[str],
    counted: Mapping[str, np.ndarray],
    ious: Optional[Mapping[str, np.ndarray]] = None,
) -> tuple[np.ndarray, int]:
    """Per-class AP ``(C,)`` over ``frames`` with ``counted[frame] (G,)`` marking the GT in the
    split; also the number of positives. ``ious``: optional precomputed ``(K, G)`` per frame."""
    npos = np.zeros(num_classes)
    total = sum(len(ground_truth[f].label_ids) for f in frames)
    in_split = sum(int(counted[f].sum()) for f in frames)
    empty_weight = in_split / total if total else 1.0
    parts = []
    for f in frames:
        truth, keep = ground_truth[f], counted[f]
        np.add.at(npos, truth.label_ids[keep], 1)
        det = detections.get(f)
        if det is not None and len(det.scores):
            tp, fp = match_frame(det, truth, keep, empty_weight, (ious or {}).get(f))
            parts.append((_f64(det.scores), det.label_ids, tp, fp))
    if not parts:
        parts = [(np.zeros(0), np.zeros(0, np.int64), np.zeros(0), np.zeros(0))]
    cat = [np.concatenate(p) for p in zip(*parts)]
    return class_aps(*cat, npos), int(npos.sum())


def _mean_percent(aps: np.ndarray) -> Optional[float]:
    valid = aps[~np.isnan(aps)]
    return float(100.0 * valid.mean()) if valid.size else None


def _motion_classes(motion_iou: np.ndarray) -> np.ndarray:
    """``"slow"``/``"medium"``/``"fast"`` per box (:func:`tsm_apps.data.motion.motion_class`)."""
    return np.array([motion_class(float(m)) for m in motion_iou], dtype=object)


def _validate(
    detections: Mapping[str, FrameDetections],
    ground_truth: Mapping[str, FrameTruth],
    num_classes: int,
) -> None:
    unknown = [f for f in detections if f not in ground_truth]
    if unknown:
        raise ValueError(
            f"detections for {len(unknown)} frame(s) without ground truth, e.g. "
            f"{unknown[0]!r}; evaluate only annotated frames"
        )
    for f, d in detections.items():
        _check_labels(d.label_ids, num_classes, f"detections of {f!r}")
    for f, t in ground_truth.items():
        _check_labels(t.label_ids, num_classes, f"ground truth of {f!r}")


def vid_splits(ground_truth: Mapping[str, FrameTruth]) -> dict:
    """The evaluated splits: ``{key: (frames, counted)}`` with ``counted[frame] (G,)`` the GT
    in the split (:func:`split_aps`), in the order of :func:`evaluate_vid`'s keys: ``mAP``
    (every frame); ``mAP_slow``/``mAP_medium``/``mAP_fast`` when every frame has motion IoU;
    ``mAP_corrupted``, ``mAP_clean`` and ``mAP_corrupted_<kind>`` (frames of each kind) when
    some frame is corrupted (``frames`` may then be empty: the figure is ``None``)."""
    frames = list(ground_truth)
    base = {f: ~ground_truth[f].ignore for f in frames}
    out = {"mAP": (frames, base)}
    if frames and all(ground_truth[f].motion_iou is not None for f in frames):
        speed = {f: _motion_classes(ground_truth[f].motion_iou) for f in frames}
        for name in ("slow", "medium", "fast"):
            out[f"mAP_{name}"] = (frames, {f: base[f] & (speed[f] == name) for f in frames})
    kinds = {f: ground_truth[f].corruption for f in frames}
    corrupted = [f for f in frames if kinds[f] is not None]
    if corrupted:
        out["mAP_corrupted"] = (corrupted, base)
        out["mAP_clean"] = ([f for f in frames if kinds[f] is None], base)
        for kind in sorted(set(kinds[f] for f in corrupted)):
            out[f"mAP_corrupted_{kind}"] = ([f for f in corrupted if kinds[f] == kind], base)
    return out


def evaluate_vid(
    detections: Mapping[str, FrameDetections],
    ground_truth: Mapping[str, FrameTruth],
    class_names: Sequence[str],
) -> dict:
    """ImageNet-VID mAP of ``detections`` (frame key -> :class:`FrameDetections`) against
    ``ground_truth`` (frame key -> :class:`FrameTruth`; every evaluated frame, also those without
    objects or detections). Values are percent (0..100), ``None`` where not applicable.

    Keys: ``mAP``; ``mAP_slow``/``mAP_medium``/``mAP_fast`` (motion split, ``None`` unless every
    frame has ``motion_iou``); ``mAP_corrupted`` over the corrupted frames, ``mAP_clean`` over the
    others and ``mAP_corrupted_<kind>`` per corruption kind (``None`` / absent when no frame is
    corrupted); ``AP_<class>`` per class (``None`` for a class without GT, left out of the
    mean); ``n_frames``, ``n_gt`` and ``n_gt_<speed>`` (positives of each split). The splits:
    :func:`vid_splits`.
    """
    c = len(class_names)
    _validate(detections, ground_truth, c)
    splits = vid_splits(ground_truth)
    frames, base = splits.pop("mAP")
    ious = {f: box_iou(_f64(d.boxes), _f64(ground_truth[f].boxes)) for f, d in detections.items()}
    aps, npos = split_aps(detections, ground_truth, c, frames, base, ious)
    out: dict = {"mAP": _mean_percent(aps), "n_frames": len(frames), "n_gt": npos}
    out.update({k: None for k in SPLIT_KEYS[1:]})
    out.update(
        {f"AP_{n}": (None if np.isnan(a) else float(100.0 * a)) for n, a in zip(class_names, aps)}
    )
    for key, (sel, counted) in splits.items():
        if not sel:
            out[key] = None
            continue
        aps_k, n = split_aps(detections, ground_truth, c, sel, counted, ious)
        if key in ("mAP_slow", "mAP_medium", "mAP_fast"):
            out["n_gt_" + key[4:]] = n
        out[key] = _mean_percent(aps_k)
    return out
