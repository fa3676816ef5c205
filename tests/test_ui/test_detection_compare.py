"""Per-frame ground-truth matching of the Detection view (VID rule), on hand-made boxes."""

from __future__ import annotations

import numpy as np

from detection.records import FrameDetections, FrameTruth
from ui.app.sources import found_objects
from ui.app.views.detection import only_found_by

DETECTOR_CLASSES = ("dog", "car", "cat")  # a detector's own class order, not VID's


def dets(*rows) -> FrameDetections:
    """``(label, score, x1, y1, x2, y2)`` rows."""
    return FrameDetections(
        np.array([r[2:] for r in rows], np.float32).reshape(-1, 4),
        np.array([r[1] for r in rows], np.float32),
        [DETECTOR_CLASSES.index(r[0]) for r in rows],
        tuple(r[0] for r in rows),
    )


# a 10x10 car (threshold min(0.5, 100/400) = 0.25) and a 100x100 dog (threshold 0.5); class ids
# in ILSVRC2015_VID order (car 6, dog 8): objects are matched by class name across the two lists
TRUTH = FrameTruth(
    np.array([[0, 0, 10, 10], [50, 50, 150, 150]], np.float64), [6, 8], ("car", "dog")
)


def test_vid_threshold_class_and_one_match_per_object():
    # car box twice as tall: IoU 100/200 = 0.5 >= 0.25; dog cut to 60 rows: IoU 0.6 >= 0.5
    assert found_objects(
        dets(("car", 0.9, 0, 0, 10, 20), ("dog", 0.8, 50, 50, 150, 110)), TRUTH
    ).tolist() == [True, True]
    # car box 3.5x as tall: IoU 100/350 = 0.286 >= 0.25 still; dog cut to 45 rows: 0.45 < 0.5
    assert found_objects(
        dets(("car", 0.9, 0, 0, 10, 35), ("dog", 0.8, 50, 50, 150, 95)), TRUTH
    ).tolist() == [True, False]
    # car box 5x as tall: IoU 0.2 < 0.25; a perfect box of the wrong class finds nothing
    assert found_objects(
        dets(("car", 0.9, 0, 0, 10, 50), ("cat", 0.99, 50, 50, 150, 150)), TRUTH
    ).tolist() == [False, False]
    assert found_objects(dets(), TRUTH).tolist() == [False, False]
    assert (
        found_objects(
            dets(("car", 0.5, 0, 0, 10, 10)), FrameTruth(np.zeros((0, 4)), [], ())
        ).tolist()
        == []
    )


def test_frames_where_one_model_finds_what_the_other_misses():
    car, dog = ("car", 0.9, 0, 0, 10, 10), ("dog", 0.9, 50, 50, 150, 150)
    low_dog = ("dog", 0.2, 50, 50, 150, 150)  # below the minimum score: not shown, not counted
    results = {
        "TSN": [dets(car), dets(car, dog), dets(), dets(low_dog)],
        "TSM": [dets(car, dog), dets(car, dog), dets(dog), dets(car)],
    }
    assert only_found_by(results, [TRUTH] * 4, min_score=0.3) == {"TSN": [], "TSM": [0, 2, 3]}
    assert only_found_by(results, [TRUTH] * 4, min_score=0.1) == {"TSN": [3], "TSM": [0, 2, 3]}
