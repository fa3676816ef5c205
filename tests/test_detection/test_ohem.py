"""OHEM ranking (R-FCN): the kept RoIs are those of largest cls + box loss, checked against
losses computed by hand (cross-entropy, mmdet's delta encoding and smooth L1 written out)."""

import math

import torch
from mmdet.registry import MODELS

import detection  # noqa: F401  (registers the head and the sampler)
from model_fixtures import hardest_sample


def _smooth_l1(d):
    return 0.5 * d * d if abs(d) < 1 else abs(d) - 0.5


def _sample(with_box_loss):
    head = MODELS.build(
        dict(type="RFCNBBoxHead", num_classes=3, in_channels=16, mid_channels=8, k=3)
    )
    bg = torch.tensor([0.0, -3, 0, -2, 2, 3, -1, 0, 0, 1])
    gt_inds = torch.tensor([1, 0, 1, 0, 1, 1, 0, 1, 0, 0])
    res = hardest_sample(head, bg, gt_inds, with_box_loss=with_box_loss)
    return bg.tolist(), gt_inds.tolist(), res


def _hand_losses(bg, gt_inds, with_box):
    out = []
    for i, (b, g) in enumerate(zip(bg, gt_inds)):
        ce = math.log(3 + math.exp(b)) - (0.0 if g else b)  # logits (0, 0, 0, b)
        if g and with_box:
            # proposal [i, 0, i+20, 20] -> gt [0, 0, 30, 20]: dx = (15 - (i+10)) / 20,
            # dw = log(30/20), dy = dh = 0, divided by the stds (0.1, 0.1, 0.2, 0.2)
            ce += _smooth_l1((5 - i) / 2) + _smooth_l1(math.log(1.5) / 0.2)
        out.append(ce)
    return out


def test_ohem_keeps_the_largest_cls_plus_box_losses():
    bg, gt_inds, res = _sample(True)
    loss = _hand_losses(bg, gt_inds, True)
    want = sorted(range(10), key=lambda i: -loss[i])[:4]
    assert sorted(want) == [0, 1, 4, 5]  # 4.91, 4.67 (positives), 4.12 (negative), 3.99
    assert sorted(res.pos_inds.tolist()) == [0, 4, 5] and res.neg_inds.tolist() == [1]


def test_ohem_without_box_loss_ranks_by_classification_only():
    bg, gt_inds, res = _sample(False)
    loss = _hand_losses(bg, gt_inds, False)
    want = sorted(range(10), key=lambda i: -loss[i])[:4]
    assert sorted(want) == [1, 3, 4, 5]  # 4.12, 3.14 (negatives), 3.14, 2.34 (positives)
    kept = sorted(res.pos_inds.tolist() + res.neg_inds.tolist())
    assert kept == sorted(want)
