import numpy as np
import pytest

from dissect.units import (
    UnitCollector,
    default_unit_layers,
    dissect_layer,
    frame_rows_for,
    unit_ious,
    unit_thresholds,
)


def _acts_and_masks():
    """4 frames, 2 units on a 4x4 grid (no upsampling): unit 0 fires on the mask, unit 1
    on the opposite corner."""
    masks = np.zeros((4, 4, 4), bool)
    masks[:, :2, :2] = True
    acts = np.zeros((4, 2, 4, 4), np.float32)
    acts[:, 0, :2, :2] = 1.0
    acts[:, 1, 2:, 2:] = 1.0
    return acts, masks


def test_thresholds_are_per_unit_top_quantiles():
    acts = np.arange(2 * 2 * 10, dtype=np.float32).reshape(10, 2, 2, 1)  # unit 0 / unit 1
    thr = unit_thresholds(acts, quantile=0.25)
    per_unit = [acts[:, k].ravel() for k in range(2)]
    assert thr.tolist() == [np.quantile(v, 0.75) for v in per_unit]
    assert (per_unit[0] > thr[0]).mean() == 0.25


def test_unit_iou_on_hand_made_activations():
    acts, masks = _acts_and_masks()
    iou = unit_ious(acts, masks, np.array([0.5, 0.5]))
    assert iou.tolist() == [1.0, 0.0]
    # unit 0 thresholded low keeps every pixel: IoU = 4 / 16
    assert unit_ious(acts, masks, np.array([-1.0, 0.5]))[0] == 0.25


def test_dissect_layer_counts_detectors():
    acts, masks = _acts_and_masks()
    res = dissect_layer(acts, masks, quantile=0.3, min_iou=0.04)  # levels 0: a > 0
    assert res["units"] == 2 and res["detectors"] == 1
    assert res["iou"][0] == 1.0 and res["iou"][1] == 0.0


def test_collector_upsamples_and_matches_pooled_frames():
    acts, masks = _acts_and_masks()
    low = acts[:, :, ::2, ::2]  # 2x2 maps, upsampled to 4x4
    col = UnitCollector(["l"])
    col.add({"l": __import__("torch").from_numpy(low[:2])}, masks)  # 2 steps for 4 frames
    assert len(col) == 1 and col.masks["l"][0].shape == (2, 4, 4)
    assert frame_rows_for(masks, 4) is masks
    with pytest.raises(ValueError, match="cannot match 3"):
        frame_rows_for(masks, 3)


def test_default_layers(model):
    assert default_unit_layers(model) == [f"backbone.layer{i}" for i in range(1, 5)]
