import numpy as np
import pytest

from dissect.threshold import (
    dataset_keep_fraction_threshold,
    fraction_of_max_mask,
    mask_for,
    threshold_mask,
)


def test_dataset_threshold_keeps_twenty_percent_over_all_maps():
    a = np.arange(1, 6, dtype=float).reshape(1, 1, 5)  # 1..5
    b = np.arange(6, 11, dtype=float).reshape(1, 5, 1)  # 6..10
    t = dataset_keep_fraction_threshold([a, b], keep=0.2)
    assert t == 9.0  # keeps 9 and 10: 2 of 10 pixels
    kept = threshold_mask(a, t).sum() + threshold_mask(b, t).sum()
    assert kept == 2
    assert dataset_keep_fraction_threshold([a, b], keep=0.25) == 8.0  # ceil(2.5) = 3 kept


def test_dataset_threshold_is_global_not_per_map():
    low = np.zeros((1, 2, 5))
    high = np.full((1, 2, 5), 3.0)
    t = dataset_keep_fraction_threshold([low, high])
    assert t == 3.0
    assert not threshold_mask(low, t).any()


def test_dataset_threshold_errors():
    with pytest.raises(ValueError, match="keep must be in"):
        dataset_keep_fraction_threshold([np.ones((2, 2))], keep=0)
    with pytest.raises(ValueError, match="got none"):
        dataset_keep_fraction_threshold([])


def test_fraction_of_max_per_frame_and_per_clip():
    maps = np.array([[[0.0, 1.0], [2.0, 10.0]], [[0.1, 0.2], [0.3, 1.0]]])
    per_frame = fraction_of_max_mask(maps, 0.2)
    assert per_frame.tolist() == [[[False, False], [True, True]], [[False, True], [True, True]]]
    per_clip = fraction_of_max_mask(maps, 0.2, per="clip")  # 20% of 10 = 2
    assert per_clip.sum() == 2


def test_fraction_of_max_keeps_nothing_on_non_positive_maps():
    assert not fraction_of_max_mask(np.full((1, 3, 3), -1.0)).any()
    assert not fraction_of_max_mask(np.zeros((1, 3, 3))).any()


def test_mask_for_names():
    m = np.array([[[1.0, 5.0]]])
    assert mask_for("dataset", m, 5.0).tolist() == [[[False, True]]]
    assert mask_for("max20", m).tolist() == [[[True, True]]]
    with pytest.raises(ValueError, match="unknown threshold"):
        mask_for("otsu", m)
