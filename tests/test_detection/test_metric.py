"""The VID metric's numpy core on hand-made detections, with hand-computed APs."""

import numpy as np
import pytest

from detection.records import FrameDetections, FrameTruth
from detection.vid_eval import evaluate_vid, match_frame, vid_iou_threshold, voc_ap
from tsm_apps.data.motion import box_iou

CLASSES = ("car", "dog", "cat")


def dets(*rows):
    """rows: (x1, y1, x2, y2, score, label)."""
    a = np.array(rows, dtype=float).reshape(-1, 6)
    return FrameDetections(a[:, :4], a[:, 4], a[:, 5].astype(int))


def truth(*rows, **kw):
    """rows: (x1, y1, x2, y2, label)."""
    a = np.array(rows, dtype=float).reshape(-1, 5)
    return FrameTruth(a[:, :4], a[:, 4].astype(int), **kw)


BOX_A, BOX_B = (0, 0, 100, 100), (200, 0, 300, 100)
FAR = (400, 400, 500, 500)


def test_box_iou_and_threshold():
    assert box_iou(
        np.array([[0, 0, 10, 10]]), np.array([[0, 0, 10, 4], [5, 0, 15, 10]])
    ) == pytest.approx(np.array([[0.4, 50 / 150]]))
    thr = vid_iou_threshold(np.array([[0, 0, 10, 10], [0, 0, 100, 100], [0, 0, 30, 20]]))
    assert thr == pytest.approx([100 / 400, 0.5, 600 / 1200])


def test_voc_ap_envelope():
    # recall .5,.5,1 / precision 1,.5,2/3 -> .5*1 + .5*(2/3)
    assert voc_ap(np.array([0.5, 0.5, 1.0]), np.array([1.0, 0.5, 2 / 3])) == pytest.approx(5 / 6)
    assert voc_ap(np.zeros(0), np.zeros(0)) == 0.0


def test_perfect_detections_give_100():
    gt = {"a": truth((*BOX_A, 0), (*BOX_B, 1)), "b": truth((*BOX_A, 0))}
    d = {"a": dets((*BOX_A, 0.9, 0), (*BOX_B, 0.8, 1)), "b": dets((*BOX_A, 0.7, 0))}
    m = evaluate_vid(d, gt, CLASSES)
    assert m["mAP"] == pytest.approx(100.0)
    assert m["AP_car"] == pytest.approx(100.0) and m["AP_dog"] == pytest.approx(100.0)
    assert m["AP_cat"] is None  # no GT: excluded from the mean
    assert m["n_gt"] == 3 and m["n_frames"] == 2
    assert m["mAP_slow"] is None and m["mAP_corrupted"] is None


def test_empty_detections_give_0():
    gt = {"a": truth((*BOX_A, 0)), "b": truth()}
    m = evaluate_vid({}, gt, CLASSES)
    assert m["mAP"] == 0.0 and m["AP_car"] == 0.0 and m["AP_dog"] is None


def test_no_ground_truth_at_all_gives_none():
    assert evaluate_vid({"a": dets((*BOX_A, 0.9, 0))}, {"a": truth()}, CLASSES)["mAP"] is None


def test_duplicate_detection_is_a_false_positive():
    gt = {"a": truth((*BOX_A, 0)), "b": truth((*BOX_A, 0))}
    d = {"a": dets((*BOX_A, 0.9, 0), (*BOX_A, 0.8, 0)), "b": dets((*BOX_A, 0.7, 0))}
    # ranked: TP, FP (duplicate), TP -> recall .5,.5,1, precision 1,.5,2/3 -> AP 5/6
    assert evaluate_vid(d, gt, CLASSES)["mAP"] == pytest.approx(100 * 5 / 6)


def test_small_object_threshold():
    gt = {"a": truth((0, 0, 10, 10, 0))}  # 10x10: thr = 100 / 400 = 0.25
    assert evaluate_vid({"a": dets((0, 0, 10, 4, 0.9, 0))}, gt, CLASSES)["mAP"] == 100.0  # IoU .4
    assert evaluate_vid({"a": dets((0, 0, 10, 2, 0.9, 0))}, gt, CLASSES)["mAP"] == 0.0  # IoU .2
    big = {"a": truth((0, 0, 100, 100, 0))}  # thr 0.5: IoU .4 is a miss
    assert evaluate_vid({"a": dets((0, 0, 100, 40, 0.9, 0))}, big, CLASSES)["mAP"] == 0.0


def test_two_classes_hand_computed():
    gt = {"a": truth((*BOX_A, 0), (*BOX_B, 1)), "b": truth((*BOX_A, 0))}
    d = {
        "a": dets((*BOX_A, 0.9, 0), (*FAR, 0.8, 0), (*BOX_A, 0.95, 1), (*BOX_B, 0.5, 1)),
        "b": dets((*BOX_A, 0.6, 0), (*BOX_A, 0.3, 2)),
    }
    m = evaluate_vid(d, gt, CLASSES)
    # car: TP .9, FP .8, TP .6 -> 5/6. dog: FP .95 (wrong class on the car), TP .5 -> 1/2.
    assert m["AP_car"] == pytest.approx(100 * 5 / 6)
    assert m["AP_dog"] == pytest.approx(50.0)
    assert m["AP_cat"] is None  # detections but no GT: left out of the mean
    assert m["mAP"] == pytest.approx(100 * (5 / 6 + 1 / 2) / 2)


def test_greedy_matching_takes_highest_score_first():
    gt = {"a": truth((0, 0, 100, 100, 0))}
    # the lower-scored detection overlaps more, but the higher-scored one claims the GT
    d = {"a": dets((0, 0, 100, 60, 0.5, 0), (0, 0, 100, 100, 0.4, 0))}
    assert evaluate_vid(d, gt, CLASSES)["mAP"] == pytest.approx(100.0)
    d = {"a": dets((0, 0, 100, 60, 0.5, 0), (0, 0, 100, 100, 0.6, 0))}
    assert evaluate_vid(d, gt, CLASSES)["mAP"] == pytest.approx(100.0)
    d = {"a": dets((0, 0, 100, 40, 0.5, 0), (0, 0, 100, 100, 0.4, 0))}  # IoU .4: FP then TP
    assert evaluate_vid(d, gt, CLASSES)["mAP"] == pytest.approx(50.0)


def test_match_frame_ignore_rules():
    t = truth((*BOX_A, 0), (*BOX_B, 0))
    counted = np.array([True, False])  # BOX_B is outside the split
    d = dets(
        (*BOX_A, 0.9, 0),  # matches the counted GT: TP
        (*BOX_B, 0.8, 0),  # matches the ignored GT: neither
        (200, 0, 300, 30, 0.7, 0),  # below thr, nearest GT ignored: FP 0
        (0, 0, 100, 30, 0.6, 0),  # below thr, nearest GT counted: FP 1
        (*FAR, 0.5, 0),  # no overlap (tie): ignored fraction 1/2
        (*BOX_A, 0.4, 0),
    )  # duplicate on the counted GT: FP 1
    tp, fp = match_frame(d, t, counted, empty_weight=0.25)
    assert tp.tolist() == [1, 0, 0, 0, 0, 0]
    assert fp.tolist() == [0, 0, 0, 1, 0.5, 1]
    tp, fp = match_frame(dets((*FAR, 0.5, 0)), truth(), np.zeros(0, bool), empty_weight=0.25)
    assert tp.tolist() == [0] and fp.tolist() == [0.25]  # frame without GT


def test_motion_split_ignores_out_of_range_ground_truth():
    # A is slow (motion IoU .95), B fast (.5); a background detection ranks first.
    gt = {"a": truth((*BOX_A, 0), (*BOX_B, 0), motion_iou=[0.95, 0.5])}
    d = {"a": dets((*FAR, 0.99, 0), (*BOX_A, 0.9, 0), (*BOX_B, 0.8, 0))}
    m = evaluate_vid(d, gt, CLASSES)
    # overall: FP, TP, TP -> recall 0,.5,1, precision 0,.5,2/3 -> 2/3
    assert m["mAP"] == pytest.approx(100 * 2 / 3)
    # slow: background FP weight 1/2 (tie, half the frame's GT ignored), A TP, B ignored
    # -> precision at recall 1 = 1 / 1.5
    assert m["mAP_slow"] == pytest.approx(100 * 2 / 3)
    assert m["mAP_fast"] == pytest.approx(100 * 2 / 3)
    assert m["mAP_medium"] is None
    assert (m["n_gt_slow"], m["n_gt_medium"], m["n_gt_fast"]) == (1, 0, 1)
    # without the background detection: a perfect detector in every split
    d = {"a": dets((*BOX_A, 0.9, 0), (*BOX_B, 0.8, 0))}
    m = evaluate_vid(d, gt, CLASSES)
    assert m["mAP_slow"] == m["mAP_fast"] == pytest.approx(100.0)
    # a miss on the fast object only hurts the fast split
    m = evaluate_vid({"a": dets((*BOX_A, 0.9, 0))}, gt, CLASSES)
    assert (m["mAP"], m["mAP_slow"], m["mAP_fast"]) == pytest.approx((50.0, 100.0, 0.0))


def test_corrupted_split():
    gt = {
        "clean": truth((*BOX_A, 0)),
        "blur": truth((*BOX_A, 0), corruption="blur"),
        "noise": truth((*BOX_B, 0), corruption="noise"),
    }
    d = {
        "clean": dets((*BOX_A, 0.9, 0)),
        "blur": dets((*FAR, 0.8, 0)),
        "noise": dets((*BOX_B, 0.7, 0)),
    }
    m = evaluate_vid(d, gt, CLASSES)
    # all frames (3 GT): TP .9, FP .8, TP .7 -> recall 1/3,1/3,2/3, precision 1,1/2,2/3 -> 5/9
    # corrupted (2 GT): FP .8, TP .7 -> recall 0,1/2, precision 0,1/2 -> 1/4
    assert m["mAP"] == pytest.approx(100 * 5 / 9)
    assert m["mAP_corrupted"] == pytest.approx(25.0)
    assert m["mAP_clean"] == pytest.approx(100.0)
    assert m["mAP_corrupted_blur"] == 0.0 and m["mAP_corrupted_noise"] == pytest.approx(100.0)


def test_ignore_flag_and_bad_input():
    gt = {"a": truth((*BOX_A, 0), (*BOX_B, 0), ignore=[False, True])}
    m = evaluate_vid({"a": dets((*BOX_B, 0.9, 0), (*BOX_A, 0.8, 0))}, gt, CLASSES)
    assert m["mAP"] == pytest.approx(100.0) and m["n_gt"] == 1
    with pytest.raises(ValueError, match="without ground truth"):
        evaluate_vid({"zz": dets()}, gt, CLASSES)
    with pytest.raises(ValueError, match=r"labels must be in \[0, 3\)"):
        evaluate_vid({"a": dets((*BOX_A, 0.9, 7))}, gt, CLASSES)
    with pytest.raises(ValueError, match=r"shape \(N, 4\)"):
        FrameTruth(np.zeros((2, 3)), np.zeros(2))
    with pytest.raises(ValueError, match="expected 2 values"):
        FrameDetections(np.zeros((2, 4)), np.zeros(3), np.zeros(2))
