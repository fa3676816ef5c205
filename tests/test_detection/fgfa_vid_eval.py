"""An independent re-typing of FGFA's ImageNet-VID evaluation, for the tests.

Written from what msracver/Flow-Guided-Feature-Aggregation's ``lib/dataset/
imagenet_vid_eval_motion.py`` (``vid_eval_motion``, ``calculate_ap``, ``vid_ap``) and
``imagenet_vid.py`` (motion ranges, mean over classes with AP >= 0) compute, in plain loops,
without our code. Boxes are the devkit's inclusive pixels, both ground truth (read from the XML
*as given*, no clipping) and detections (``x2 = edge - 1``); widths, heights and areas get
``+ 1``. For each motion range ``[lo, hi]`` (both ends included):

* a GT box is ignored when its motion IoU is outside the range; ignored boxes are not positives;
* per frame, detections by descending score each take the not yet taken GT of their class with
  the largest IoU among those with IoU >= the GT's threshold ``min(0.5, wh/((w+10)(h+10)))``;
  a match with a kept GT is a TP, with an ignored GT neither TP nor FP;
* an unmatched detection is a FP of weight 1 if it overlaps a kept GT more than any ignored
  one, 0 in the opposite case, and on a tie the fraction of the frame's GT that is ignored, or
  (frame without GT) the fraction of all motion IoUs of the set that fall in the range;
* per class, all detections sorted by descending score, cumulative TP/FP, VOC all-point AP;
  classes without positives left out of the mean.

A motion IoU is the mean IoU of a box with the boxes of its track in frames ``t-10..t+10``
(frame ``t`` left out), 0 when there is none (FGFA's empty ``.mat`` cell).
"""

from __future__ import annotations

RANGES = {
    "mAP": (0.0, 1.0),
    "mAP_fast": (0.0, 0.7),
    "mAP_medium": (0.7, 0.9),
    "mAP_slow": (0.9, 1.0),
}


def iou_inclusive(a, b) -> float:
    iw = min(a[2], b[2]) - max(a[0], b[0]) + 1
    ih = min(a[3], b[3]) - max(a[1], b[1]) + 1
    if iw <= 0 or ih <= 0:
        return 0.0
    union = (a[2] - a[0] + 1.0) * (a[3] - a[1] + 1.0) + (b[2] - b[0] + 1.0) * (b[3] - b[1] + 1.0)
    return iw * ih / (union - iw * ih)


def motion_ious(frames: list) -> list:
    """``frames``: one snippet, per frame a list of ``(trackid, inclusive box)``; per frame the
    list of its objects' motion IoUs."""
    out = []
    for t, objs in enumerate(frames):
        row = []
        for tid, box in objs:
            near = [
                iou_inclusive(box, b)
                for s in range(max(0, t - 10), min(len(frames), t + 11))
                if s != t
                for k, b in frames[s]
                if k == tid
            ]
            row.append(sum(near) / len(near) if near else 0.0)
        out.append(row)
    return out


def _ap(tps: list, fps: list, npos: float) -> float:
    ctp = cfp = 0.0
    rec, prec = [], []
    for tp, fp in zip(tps, fps):
        ctp, cfp = ctp + tp, cfp + fp
        rec.append(ctp / npos)
        prec.append(ctp / max(ctp + cfp, 2.220446049250313e-16))
    mrec, mpre = [0.0] + rec + [1.0], [0.0] + prec + [0.0]
    for i in range(len(mpre) - 2, -1, -1):
        mpre[i] = max(mpre[i], mpre[i + 1])
    return sum(
        (mrec[i + 1] - mrec[i]) * mpre[i + 1]
        for i in range(len(mrec) - 1)
        if mrec[i + 1] != mrec[i]
    )


def _frame(gt: list, dets: list, lo: float, hi: float, empty_weight: float) -> list:
    """``(score, label, tp, fp)`` of one frame's detections. ``gt``: ``(label, box, motion)``;
    ``dets``: ``(score, label, box)``."""
    ignored = [not lo <= m <= hi for _, _, m in gt]
    taken = [False] * len(gt)
    out = []
    for score, label, box in sorted(dets, key=lambda d: -d[0]):
        best, kbest, ov_ig, ov_in = -1.0, -1, -1.0, -1.0
        for k, (glabel, gbox, _) in enumerate(gt):
            ov = iou_inclusive(box, gbox)
            w, h = gbox[2] - gbox[0] + 1, gbox[3] - gbox[1] + 1
            thr = min(0.5, w * h / ((w + 10.0) * (h + 10.0)))
            if ov >= thr and ov > best and not taken[k] and label == glabel:
                best, kbest = ov, k
            if ignored[k]:
                ov_ig = max(ov_ig, ov)
            else:
                ov_in = max(ov_in, ov)
        if kbest >= 0:
            taken[kbest] = True
            out.append((score, label, 0.0 if ignored[kbest] else 1.0, 0.0))
        elif ov_in > ov_ig:
            out.append((score, label, 0.0, 1.0))
        elif ov_ig > ov_in:
            out.append((score, label, 0.0, 0.0))
        else:
            fp = empty_weight if not gt else sum(ignored) / len(gt)
            out.append((score, label, 0.0, fp))
    return out


def fgfa_map(frames: list) -> dict:
    """``frames``: ``[(gt, dets)]`` for every evaluated frame (``gt``: ``[(label, inclusive box,
    motion IoU)]``, ``dets``: ``[(score, label, inclusive box)]``). Mean AP in percent per key
    of :data:`RANGES` (``None`` when no class has a positive)."""
    motions = [m for gt, _ in frames for _, _, m in gt]
    out = {}
    for key, (lo, hi) in RANGES.items():
        empty_weight = sum(lo <= m <= hi for m in motions) / len(motions)
        npos, rows = {}, []
        for gt, dets in frames:
            for label, _, m in gt:
                if lo <= m <= hi:
                    npos[label] = npos.get(label, 0) + 1
            rows += _frame(gt, dets, lo, hi, empty_weight)
        rows.sort(key=lambda r: -r[0])
        aps = [
            _ap([r[2] for r in rows if r[1] == c], [r[3] for r in rows if r[1] == c], n)
            for c, n in sorted(npos.items())
        ]
        out[key] = 100.0 * sum(aps) / len(aps) if aps else None
    return out


def read_xml_gt(path, classes: list) -> list:
    """``[(label, inclusive box, trackid)]`` of one frame's XML read as FGFA reads it: the
    ``bndbox`` numbers as given; ``classes``: WordNet ids in label order."""
    import xml.etree.ElementTree as ET

    out = []
    for obj in ET.parse(path).getroot().findall("object"):
        bb = obj.find("bndbox")
        box = [float(bb.find(t).text) for t in ("xmin", "ymin", "xmax", "ymax")]
        out.append((classes.index(obj.find("name").text), box, int(obj.find("trackid").text)))
    return out


def snippet_frames(folder, classes: list, dets_of: dict) -> list:
    """:func:`fgfa_map` input of one snippet folder of XML files: every frame's GT with motion
    IoU (:func:`motion_ious`) and ``dets_of[frame name]`` (default no detection)."""
    from pathlib import Path

    files = sorted(Path(folder).glob("*.xml"))
    gts = [read_xml_gt(f, classes) for f in files]
    motion = motion_ious([[(tid, box) for _, box, tid in g] for g in gts])
    return [
        ([(lab, box, m) for (lab, box, _), m in zip(g, mo)], dets_of.get(f.stem, []))
        for f, g, mo in zip(files, gts, motion)
    ]
