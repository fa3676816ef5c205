"""Boxes with captions: labels never drawn over each other, the first (best) always shown."""

from __future__ import annotations

import numpy as np

from tsm_apps.viz import draw_boxes, place_labels


def _overlaps(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_same_box_twice_second_label_moves_inside():
    spots = place_labels(
        np.array([[10, 30, 60, 80], [10, 30, 60, 80]]), [(30, 10), (30, 10)], (100, 100)
    )
    assert spots == [(10, 19, 40, 29), (10, 30, 40, 40)]  # above the box, then inside its top


def test_labels_fall_back_and_are_left_out_when_no_room():
    boxes = np.array([[0, 0, 40, 12]] * 5)  # at the top edge: no room above
    spots = place_labels(boxes, [(30, 10)] * 5, (100, 100))
    # inside the top edge; inside the bottom edge would cover it, so just below; then no room
    assert spots == [(0, 0, 30, 10), (0, 13, 30, 23), None, None, None]
    assert place_labels(boxes[:1], [(0, 0)], (100, 100)) == [None]  # no text, no label


def test_many_overlapping_boxes_never_overlapping_labels():
    rng = np.random.default_rng(0)
    xy = rng.uniform(0, 150, (40, 2))
    boxes = np.concatenate([xy, xy + rng.uniform(20, 60, (40, 2))], 1)
    spots = place_labels(boxes, [(40, 11)] * 40, (200, 200))
    placed = [s for s in spots if s is not None]
    assert spots[0] == (boxes[0, 0], boxes[0, 1] - 12, boxes[0, 0] + 40, boxes[0, 1] - 1)
    assert 5 < len(placed) < 40
    assert all(not _overlaps(a, b) for i, a in enumerate(placed) for b in placed[i + 1 :])
    assert all(0 <= s[0] and s[2] <= 200 and 0 <= s[1] and s[3] <= 200 for s in placed)


def test_drawn_labels_match_the_placement():
    frame = np.zeros((100, 100, 3), np.uint8)
    boxes = np.array([[10, 30, 60, 80], [10, 30, 60, 80]])
    out = draw_boxes(frame, boxes, ["best 0.90", "next 0.40"], color=(255, 0, 0), width=1)
    # the best label fills the strip just above the box, the other one sits inside its top
    assert (out[19:29, 11] == [255, 0, 0]).all() and (out[31:40, 11] == [255, 0, 0]).all()
    assert (out[19:29, 12:40, 1] > 200).any()  # white text on the label
    assert (out[29, 20:30] == 0).all()  # the row between label and box is left alone
