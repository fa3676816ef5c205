import numpy as np
import pytest

from dissect.metrics import (
    box_masks,
    centre_prior,
    clip_scores,
    frame_mass,
    mask_box_iou,
    mass_ratio,
    pointing_hits,
    random_map,
    scale_boxes,
    standard_tolerance,
    summarise,
    temporal_auc,
)

NAN = [np.nan] * 4


def test_box_masks_use_pixel_centres():
    m = box_masks(np.array([[1, 0, 3, 2]]), (3, 4))
    assert m[0].astype(int).tolist() == [[0, 1, 1, 0], [0, 1, 1, 0], [0, 0, 0, 0]]


def test_pointing_game_on_hand_made_maps():
    maps = np.zeros((3, 4, 4))
    maps[0, 1, 1] = 1  # inside the box
    maps[1, 3, 3] = 1  # outside
    maps[2, 1, 1] = 1  # frame without a box
    boxes = np.array([[0, 0, 2, 2], [0, 0, 2, 2], NAN])
    assert pointing_hits(maps, boxes).tolist() == [True, False, False]
    # tolerance: (3.5, 3.5) is sqrt(1.5^2 + 1.5^2) = 2.12 px from the box corner (2, 2)
    assert pointing_hits(maps, boxes, tolerance=2.2).tolist() == [True, True, False]
    # the game's standard tolerance: 15 px at 224, scaled by the shorter side
    assert standard_tolerance((112, 112)) == 7.5 and standard_tolerance((448, 224)) == 15.0


def test_iou_of_mask_with_box():
    masks = np.zeros((2, 4, 4), bool)
    masks[0, :2, :2] = True  # equals the box: IoU 1
    masks[1, :2, :4] = True  # 8 px vs 4-px box: 4 / 8
    boxes = np.array([[0, 0, 2, 2], [0, 0, 2, 2]])
    assert mask_box_iou(masks, boxes).tolist() == [1.0, 0.5]
    assert np.isnan(mask_box_iou(masks[:1], np.array([NAN]))[0])


def test_temporal_auc_and_mass_ratio():
    mass = np.array([1.0, 4.0, 3.0, 1.0])
    active = np.array([False, True, True, False])
    assert temporal_auc(mass, active) == 1.0
    assert mass_ratio(mass, active) == 3.5
    # one tie out of four pairs: active 1.0 vs inactive 1.0 counts one half
    assert temporal_auc(np.array([1.0, 4.0, 1.0, 0.0]), np.array([0, 1, 1, 0], bool)) == 0.875
    assert temporal_auc(mass, np.ones(4, bool)) is None
    assert mass_ratio(mass, np.zeros(4, bool)) is None


def test_frame_mass_counts_the_positive_part():
    maps = np.array([[[1.0, -5.0]], [[2.0, 3.0]]])
    assert frame_mass(maps).tolist() == [1.0, 5.0]


def test_baselines():
    c = centre_prior((2, 5, 7))
    assert np.unravel_index(c[0].argmax(), c[0].shape) == (2, 3)
    centre_box = np.array([[3, 2, 4, 3], [0, 0, 1, 1]])
    assert pointing_hits(c, centre_box).tolist() == [True, False]
    r1, r2 = random_map((2, 3, 3), 7), random_map((2, 3, 3), 7)
    assert np.array_equal(r1, r2) and not np.array_equal(r1, random_map((2, 3, 3), 8))


def test_scale_boxes():
    assert scale_boxes(np.array([[10, 20, 30, 40]]), (100, 200), (50, 50)).tolist() == [
        [2.5, 10.0, 7.5, 20.0]
    ]


def test_clip_scores_and_summary():
    maps = np.zeros((4, 4, 4))
    maps[:, 0, 0] = [1, 5, 5, 1]  # mass rises in the active frames 1, 2
    boxes = np.array([[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 4, 4], NAN])
    active = np.array([0, 1, 1, 0], bool)
    s = clip_scores(maps, boxes, active, {"max20": maps > 0})
    assert s["pointing"] == [True, True, False, None]
    assert s["iou_max20"] == [1.0, 1.0, 0.0, None]
    assert s["temporal_auc"] == 1.0 and s["mass_ratio"] == 5.0
    agg = summarise([s, s])
    assert agg["pointing"] == pytest.approx(2 / 3)
    assert agg["pointing_active"] == 0.5
    assert agg["pointing_frames"] == 6 and agg["clips"] == 2
    assert agg["iou_max20"] == pytest.approx(2 / 3)


def test_shape_errors_name_the_shape():
    with pytest.raises(ValueError, match=r"\(T=2, 4\), got shape \(3, 4\)"):
        pointing_hits(np.zeros((2, 3, 3)), np.zeros((3, 4)))
