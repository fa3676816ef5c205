"""Deletion / insertion faithfulness: hand-computed curves of a linear model, a positive
control against a random map, and bad input."""

import pytest
import torch

from dissect.faithfulness import (
    CURVES,
    clip_baseline,
    clip_faithfulness,
    faithfulness_curves,
    softmax_scorer,
    summarise_faithfulness,
)
from dissect.metrics import random_map
from dissect_fixtures import tiny_model


def _hand_clip() -> torch.Tensor:
    """(1, 2, 3, 2, 2): every channel holds v; frame 0 v = [[8, 0], [0, 0]], frame 1
    [[4, 0], [0, 0]]; per-channel mean 12 / 8 = 1.5."""
    v = torch.zeros(2, 2, 2)
    v[0, 0, 0], v[1, 0, 0] = 8.0, 4.0
    return v[:, None].expand(2, 3, 2, 2)[None].clone()


def _linear(x: torch.Tensor) -> torch.Tensor:
    """Class 0: the sum over frames and channels of pixel (0, 0); class 1: minus it."""
    s = x[:, :, :, 0, 0].sum(dim=(1, 2))
    return torch.stack([s, -s], dim=1)


def _curves(maps, steps=4):
    return faithfulness_curves(_hand_clip(), maps, _linear, torch.tensor([0]), steps)


def test_curves_and_aucs_of_a_linear_model_are_the_hand_computed_ones():
    """The map is v itself: pixel (0, 0) first in each frame, frame 0 (mass 8) before frame 1.
    Score 3 * (8 + 4) = 36; the baseline puts 1.5 everywhere: 3 * (1.5 + 1.5) = 9."""
    c = _curves(_hand_clip()[:, :, 0])
    assert c["deletion_pixels"].fractions.tolist() == [0, 0.25, 0.5, 0.75, 1]
    assert c["deletion_pixels"].scores.tolist() == [[36, 9, 9, 9, 9]]
    assert c["insertion_pixels"].scores.tolist() == [[9, 36, 36, 36, 36]]
    # frames: frame 0 changed first: 3 * (1.5 + 4) = 16.5; frame 0 alone back: 3 * (8 + 1.5)
    assert c["deletion_frames"].fractions.tolist() == [0, 0.5, 1]
    assert c["deletion_frames"].scores.tolist() == [[36, 16.5, 9]]
    assert c["insertion_frames"].scores.tolist() == [[9, 28.5, 36]]
    # trapezoids: 0.25 * (45/2 + 9 + 9 + 9), 0.25 * (45/2 + 36 * 3), 0.5 * (52.5/2 + 25.5/2), ...
    aucs = {k: c[k].auc.tolist() for k in CURVES}
    assert aucs == {
        "deletion_pixels": [12.375],
        "insertion_pixels": [32.625],
        "deletion_frames": [19.5],
        "insertion_frames": [25.5],
    }


def test_a_reversed_map_scores_worse_by_the_hand_computed_amount():
    """8 - v ranks the zero pixels first (index order), pixel (0, 0) last, and frame 1 (mass
    4 + 3 * 8 = 28) before frame 0 (mass 24)."""
    c = _curves(8 - _hand_clip()[:, :, 0])
    assert c["deletion_pixels"].scores.tolist() == [[36, 36, 36, 36, 9]]
    assert c["insertion_pixels"].scores.tolist() == [[9, 9, 9, 9, 36]]
    aucs = {k: c[k].auc.tolist() for k in CURVES}
    assert aucs == {
        "deletion_pixels": [32.625],
        "insertion_pixels": [12.375],
        "deletion_frames": [25.5],
        "insertion_frames": [19.5],
    }


def test_steps_that_do_not_divide_the_frame_change_floor_of_k_hw_over_k_pixels():
    """4 pixels a frame in 3 steps: 0, 1, 2, 4 pixels (fractions 0, 1/4, 1/2, 1)."""
    c = _curves(_hand_clip()[:, :, 0], steps=3)
    assert c["deletion_pixels"].fractions.tolist() == [0, 0.25, 0.5, 1]
    assert c["deletion_pixels"].scores.tolist() == [[36, 9, 9, 9]]


def _object_clip():
    """(1, 4, 3, 8, 8) noise with a bright 3x3 square in frames 1 and 2; a model scoring the
    square's pixels (class 0) and the map pointing at them."""
    g = torch.Generator().manual_seed(0)
    x = torch.rand(1, 4, 3, 8, 8, generator=g)
    obj = torch.zeros(4, 8, 8, dtype=torch.bool)
    obj[1:3, 2:5, 3:6] = True
    x[0, :, :][obj[:, None].expand(4, 3, 8, 8)] += 4.0

    def score(clips):
        s = (clips * obj[None, :, None]).sum(dim=(1, 2, 3, 4))
        return torch.stack([s, torch.zeros_like(s)], dim=1)

    return x, obj.float()[None], score


def test_positive_control_the_right_map_beats_a_random_map():
    x, good, score = _object_clip()
    rnd = torch.from_numpy(random_map((4, 8, 8), seed=3))[None]
    a = faithfulness_curves(x, good, score, torch.tensor([0]), steps=8)
    b = faithfulness_curves(x, rnd, score, torch.tensor([0]), steps=8)
    assert a["deletion_pixels"].auc < b["deletion_pixels"].auc
    assert a["insertion_pixels"].auc > b["insertion_pixels"].auc
    assert a["deletion_frames"].auc < b["deletion_frames"].auc
    assert a["insertion_frames"].auc > b["insertion_frames"].auc


def test_a_recognizer_curve_starts_at_its_probability_and_both_games_meet_at_the_baseline():
    model = tiny_model()
    x = torch.randn(2, 4, 3, 32, 32, generator=torch.Generator().manual_seed(2))
    maps = torch.rand(2, 4, 32, 32, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        probs = model(x).softmax(-1)
        base = model(clip_baseline(x)).softmax(-1)
    cls = probs.argmax(-1)
    c = faithfulness_curves(x, maps, softmax_scorer(model), cls, steps=2, batch=2)
    for n in range(2):
        p, b = float(probs[n, cls[n]]), float(base[n, cls[n]])
        for unit in ("pixels", "frames"):
            d, i = c[f"deletion_{unit}"].scores[n], c[f"insertion_{unit}"].scores[n]
            assert d[0] == pytest.approx(p, abs=1e-6) and i[-1] == pytest.approx(p, abs=1e-6)
            assert d[-1] == pytest.approx(b, abs=1e-6) and i[0] == pytest.approx(b, abs=1e-6)


def test_records_and_their_summary():
    c = _curves(_hand_clip()[:, :, 0])
    rec = clip_faithfulness(c)
    assert rec["deletion_frames"] == {
        "fractions": [0, 0.5, 1],
        "scores": [36, 16.5, 9],
        "auc": 19.5,
    }
    rev = clip_faithfulness(_curves(8 - _hand_clip()[:, :, 0]))
    s = summarise_faithfulness([rec, None, rev])
    assert s["faithfulness_clips"] == 2
    assert s["deletion_pixels_auc"] == (12.375 + 32.625) / 2
    assert s["insertion_frames_auc"] == (25.5 + 19.5) / 2
    assert s["faithfulness_curves"]["deletion_pixels"] == {
        "fractions": [0, 0.25, 0.5, 0.75, 1],
        "scores": [36, 22.5, 22.5, 22.5, 9],
    }
    assert summarise_faithfulness([None, None]) == {}


@pytest.mark.parametrize(
    "clips, maps, classes, steps, match",
    [
        ((1, 2, 1, 2, 2), (1, 2, 2, 2), (1,), 4, r"clips must be \(N, T, 3, H, W\), got \(1, 2, 1"),
        ((1, 2, 3, 2, 2), (1, 2, 2, 3), (1,), 4, r"maps must be .* got \(1, 2, 2, 3\)"),
        ((1, 2, 3, 2, 2), (1, 2, 2, 2), (2,), 4, r"classes must be \(N,\) = \(1,\), got \(2,\)"),
        ((1, 2, 3, 2, 2), (1, 2, 2, 2), (1,), 0, r"steps must be >= 1, got 0"),
    ],
)
def test_bad_input_is_a_one_line_value_error_naming_the_shape(clips, maps, classes, steps, match):
    with pytest.raises(ValueError, match=match):
        faithfulness_curves(
            torch.zeros(clips),
            torch.zeros(maps),
            _linear,
            torch.zeros(classes, dtype=torch.long),
            steps,
        )


def test_a_scorer_that_does_not_return_class_scores_is_a_value_error():
    with pytest.raises(ValueError, match=r"score must return \(B, K\) class scores, got \(5,\)"):
        faithfulness_curves(
            _hand_clip(),
            torch.zeros(1, 2, 2, 2),
            lambda x: x.sum(dim=(1, 2, 3, 4)),
            torch.tensor([0]),
            steps=4,
        )
