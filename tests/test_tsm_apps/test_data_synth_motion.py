"""FGFA motion IoU and the slow/medium/fast split on hand-made tracks (exact numbers)."""

import numpy as np
import pytest
import scipy.io

from tsm_apps.data.motion import (
    box_iou,
    count_motion_classes,
    motion_class,
    motion_iou,
    read_motion_iou_mat,
    snippet_motion_iou,
    write_motion_iou_mat,
)
from tsm_apps.data.vid_layout import VIDFrame, VIDObject


def test_box_iou_exact():
    a = [[0, 0, 10, 10]]
    b = [[5, 0, 15, 10], [20, 20, 30, 30], [0, 0, 10, 10], [0, 0, 0, 0]]
    np.testing.assert_allclose(box_iou(a, b), [[50 / 150, 0.0, 1.0, 0.0]])
    assert box_iou(np.zeros((0, 4)), a).shape == (0, 1)
    with pytest.raises(ValueError, match=r"\(N, 4\)"):
        box_iou([[0, 0, 1]], a)


def test_motion_iou_static_and_moving_tracks():
    static = [[0, 0, 10, 10]] * 5
    np.testing.assert_array_equal(motion_iou(static), np.ones(5))
    # moves 5 px right per frame: IoU 1/3 with each neighbour, 0 two frames away
    moving = [[5 * t, 0, 5 * t + 10, 10] for t in range(3)]
    np.testing.assert_allclose(motion_iou(moving), [1 / 6, 1 / 3, 1 / 6])


def test_motion_iou_window_and_gaps():
    # window 1: only t-1 and t+1; a missing frame is skipped, not counted as 0; frame 0 has no
    # neighbour in its window: 0.0 (FGFA's empty .mat cell, "fast")
    track = [[0, 0, 10, 10], None, [5, 0, 15, 10], [5, 0, 15, 10]]
    out = motion_iou(track, window=1)
    assert np.isnan(out[1])
    np.testing.assert_allclose(out[[0, 2, 3]], [0.0, 1.0, 1.0])
    out = motion_iou(track, window=2)  # frame 0 now sees frame 2 (IoU 1/3), frame 3 does not
    np.testing.assert_allclose(out[[0, 2, 3]], [1 / 3, (1 / 3 + 1) / 2, 1.0])
    # frames further than 10 away are outside the default window
    far = [[0, 0, 10, 10]] + [None] * 10 + [[100, 100, 110, 110]]
    np.testing.assert_allclose(motion_iou(far)[[0, 11]], [0.0, 0.0])
    assert motion_class(motion_iou([[0, 0, 10, 10]])[0]) == "fast"  # a one-frame track
    with pytest.raises(ValueError, match="window"):
        motion_iou(track, window=0)


def test_motion_class_boundaries():
    assert [motion_class(v) for v in (1.0, 0.9001, 0.9, 0.8, 0.7, 0.6999, 0.0)] == [
        "slow",
        "slow",
        "medium",
        "medium",
        "medium",
        "fast",
        "fast",
    ]
    with pytest.raises(ValueError):
        motion_class(float("nan"))
    assert count_motion_classes([[0.95, 0.8], [0.1], []]) == {"slow": 1, "medium": 1, "fast": 1}


def test_snippet_motion_iou_uses_inclusive_xml_boxes():
    # inclusive [0..9] -> edges [0, 10]; track 7 moves 5 px a frame, track 3 stays
    frames = [
        VIDFrame(
            "s",
            f"{t:06d}",
            64,
            64,
            [
                VIDObject(7, "n02958343", (5 * t, 0, 5 * t + 9, 9)),
                VIDObject(3, "n02691156", (40, 40, 49, 49)),
            ],
        )
        for t in range(3)
    ]
    out = snippet_motion_iou(frames)
    np.testing.assert_allclose(out, [[1 / 6, 1.0], [1 / 3, 1.0], [1 / 6, 1.0]])
    frames[1].objects.append(VIDObject(7, "n02958343", (0, 0, 9, 9)))
    with pytest.raises(ValueError, match="track 7 appears twice"):
        snippet_motion_iou(frames)


def test_motion_iou_mat_round_trip_and_fgfa_cells(tmp_path):
    write_motion_iou_mat(tmp_path / "m.mat", [[0.5, 0.0], [], [0.95]])
    got = read_motion_iou_mat(tmp_path / "m.mat")
    assert [g.tolist() for g in got] == [[0.5, 0.0], [], [0.95]]
    # FGFA's own expression on our file (imagenet_vid_eval_motion.py, "read motion iou")
    m = scipy.io.loadmat(str(tmp_path / "m.mat"))["motion_iou"]
    fgfa = [
        [m[i][0][j][0] if len(m[i][0][j]) != 0 else 0 for j in range(len(m[i][0]))]
        for i in range(len(m))
    ]
    assert fgfa == [[0.5, 0.0], [0], [0.95]]  # an empty frame: a (1, 0) cell, as FGFA's file
    assert m[1][0].shape == (1, 0)
    # a cell of cells with an empty entry (an object without neighbours) reads as 0
    cells, inner = np.empty((1, 1), object), np.empty((2, 1), object)
    inner[0, 0], inner[1, 0] = np.array([[0.8]]), np.zeros((0, 0))
    cells[0, 0] = inner
    scipy.io.savemat(str(tmp_path / "c.mat"), {"motion_iou": cells})
    assert read_motion_iou_mat(tmp_path / "c.mat")[0].tolist() == [0.8, 0.0]
    scipy.io.savemat(str(tmp_path / "bad.mat"), {"iou": np.zeros(3)})
    with pytest.raises(ValueError, match="bad.mat.*motion_iou"):
        read_motion_iou_mat(tmp_path / "bad.mat")
