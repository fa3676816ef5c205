"""The records of a frame's detections and ground truth: checked shapes, kept dtypes, filters."""

import numpy as np
import pytest

from detection.records import FrameDetections, FrameTruth


def test_detections_keep_float32_and_filter_by_score_in_order():
    d = FrameDetections(
        np.array([[0, 0, 4, 4], [1, 2, 3, 5], [2, 2, 9, 9]], np.float32),
        np.array([0.9, 0.2, 0.5], np.float32),
        [3, 1, 3],
        ("dog", "car", "dog"),
        frame=7,
    )
    assert d.boxes.dtype == np.float32 and d.scores.dtype == np.float32
    assert d.label_ids.dtype == np.int64
    k = d.keep(0.5)
    assert k.labels == ("dog", "dog") and k.label_ids.tolist() == [3, 3] and k.frame == 7
    assert k.boxes.tolist() == [[0, 0, 4, 4], [2, 2, 9, 9]]
    assert k.scores.tolist() == pytest.approx([0.9, 0.5])
    assert d.keep(0.95).boxes.shape == (0, 4) and d.keep(0.95).labels == ()


def test_detections_to_dict_rounds_boxes_and_scores():
    d = FrameDetections(np.array([[1.26, 2.0, 3.04, 4.55]]), [0.123456], [2], ("cat",), 4)
    assert d.to_dict() == {
        "frame": 4,
        "boxes": [[1.3, 2.0, 3.0, 4.6]],
        "scores": [0.1235],
        "labels": ["cat"],
        "label_ids": [2],
    }


def test_integer_input_becomes_float64_and_empty_boxes_are_n_by_4():
    d = FrameDetections([[0, 0, 2, 2]], [1], [0])
    assert d.boxes.dtype == np.float64 and d.scores.dtype == np.float64 and d.labels == ()
    t = FrameTruth([], [])
    assert t.boxes.shape == (0, 4) and t.ignore.shape == (0,) and t.motion_iou is None


def test_truth_scaled_keeps_everything_but_the_box_size():
    t = FrameTruth(
        [[10, 20, 30, 41]], [6], ("car",), motion_iou=[0.8], ignore=[True], corruption="blur"
    )
    s = t.scaled(0.5)
    assert s.boxes.tolist() == [[5, 10, 15, 20.5]] and s.label_ids.tolist() == [6]
    assert s.labels == ("car",) and s.motion_iou.tolist() == [0.8]
    assert s.ignore.tolist() == [True] and s.corruption == "blur"


@pytest.mark.parametrize(
    "make, message",
    [
        (
            lambda: FrameDetections(np.zeros((2, 3)), [0, 0], [0, 0]),
            r"shape \(N, 4\), got \(2, 3\)",
        ),
        (lambda: FrameDetections(np.zeros((2, 4)), [0, 0], [0, 0], ("car",)), "2 class names"),
        (lambda: FrameDetections(np.zeros((2, 4)), [0], [0, 0]), "expected 2 values"),
        (lambda: FrameTruth(np.zeros((1, 4)), [0], motion_iou=[1, 1]), "motion IoU: expected 1"),
    ],
)
def test_bad_shapes_raise_naming_them(make, message):
    with pytest.raises(ValueError, match=message):
        make()
