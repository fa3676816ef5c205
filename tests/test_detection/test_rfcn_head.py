"""R-FCN head: PS pooling channel order and the vote on hand-made maps, head shapes, OHEM."""

import pytest
import torch
from mmdet.registry import MODELS
from mmengine.structures import InstanceData
from torchvision.ops import ps_roi_pool

import detection  # noqa: F401  (registers the classes)
from detection.ohem import rank_hardest
from detection.ps_roi import PSRoIVote, ps_roi_vote
from detection.rfcn_head import RFCNBBoxHead
from model_fixtures import hardest_sample


def quadrant_maps() -> torch.Tensor:
    """k=2, D=2 on a 4x4 map. Output 0: cell (i, j)'s map is 1 on quadrant (i, j) only;
    output 1: cell (i, j)'s map is 1 on the opposite quadrant (1-i, 1-j) only."""
    maps = torch.zeros(1, 2 * 2 * 2, 4, 4)
    for i in range(2):
        for j in range(2):
            maps[0, (0 * 2 + i) * 2 + j, 2 * i : 2 * i + 2, 2 * j : 2 * j + 2] = 1.0
            oi, oj = 2 * (1 - i), 2 * (1 - j)
            maps[0, (1 * 2 + i) * 2 + j, oi : oi + 2, oj : oj + 2] = 1.0
    return maps


def test_ps_pool_reads_each_cell_from_its_own_map_and_votes_the_mean():
    rois = torch.tensor([[0, 0, 0, 4, 4.0]])
    out = ps_roi_vote(quadrant_maps(), rois, k=2, spatial_scale=1.0, mode="pool")
    assert out.tolist() == [[1.0, 0.0]]


def test_ps_pool_half_roi_sees_one_cell_per_map():
    # RoI = top-left quadrant: cell (i, j) covers pixel (i, j); only cell (0,0) of output 0
    # reads its lit quadrant, output 1's cell (1,1) reads the lit top-left of its map
    rois = torch.tensor([[0, 0, 0, 2, 2.0]])
    out = ps_roi_vote(quadrant_maps(), rois, k=2, spatial_scale=1.0, mode="pool")
    assert out.tolist() == [[0.25, 0.25]]


def test_align_vote_of_constant_maps_is_the_mean_of_the_cells():
    values = torch.arange(18.0).reshape(2, 3, 3)  # D=2, k=3
    maps = values.reshape(1, 18, 1, 1).expand(2, 18, 12, 12).contiguous()
    rois = torch.tensor([[1, 1.5, 2.0, 9.5, 10.0], [0, 0, 0, 12, 12.0]])
    out = PSRoIVote(k=3, spatial_scale=1.0, mode="align")(maps, rois)
    assert torch.allclose(out, values.mean(dim=(1, 2)).expand(2, 2), atol=1e-6)


def test_vote_rejects_bad_shapes():
    with pytest.raises(ValueError, match="multiple of k\\*k=4"):
        ps_roi_vote(torch.zeros(1, 6, 4, 4), torch.zeros(1, 5), 2, 1.0)
    with pytest.raises(ValueError, match=r"\(R, 5\)"):
        ps_roi_vote(torch.zeros(1, 8, 4, 4), torch.zeros(1, 4), 2, 1.0)
    with pytest.raises(ValueError, match="batch indices"):
        ps_roi_vote(torch.zeros(1, 8, 4, 4), torch.tensor([[1.0, 0, 0, 2, 2]]), 2, 1.0)
    with pytest.raises(ValueError, match="pool mode"):
        PSRoIVote(mode="max")


def tiny_head(**kw) -> RFCNBBoxHead:
    cfg = dict(type="RFCNBBoxHead", num_classes=3, in_channels=16, mid_channels=8, k=3)
    cfg.update(kw)
    return MODELS.build(cfg)


def test_head_channels_and_output_shapes():
    torch.manual_seed(0)
    head = tiny_head()
    assert head.cls_conv.out_channels == 3 * 3 * (3 + 1)
    assert head.reg_conv.out_channels == 3 * 3 * 8
    x = (torch.randn(2, 16, 6, 8),)
    rois = torch.tensor([[0, 0, 0, 64, 48.0], [1, 8, 8, 40, 90], [1, 0, 0, 16, 16]])
    cls, box = head(x, rois)
    assert cls.shape == (3, 4) and box.shape == (3, 4)


def test_head_votes_torchvision_ps_pooling_of_its_own_score_maps():
    torch.manual_seed(0)
    head = tiny_head(pool_mode="pool")
    x = torch.randn(2, 16, 6, 6)
    rois = torch.tensor([[1, 0, 0, 96, 96.0], [0, 16, 8, 70, 50]])
    cls_maps, reg_maps = head.score_maps(x)
    cls, box = head(x, rois)
    want_cls = ps_roi_pool(cls_maps, rois, 3, 1 / 16).mean(dim=(2, 3))
    want_reg = ps_roi_pool(reg_maps, rois, 3, 1 / 16).mean(dim=(2, 3))
    assert torch.allclose(cls, want_cls, atol=1e-6)
    assert torch.allclose(box, want_reg[:, 4:], atol=1e-6)  # fg half of the 8 deltas


def test_background_box_half_gets_zero_gradient_but_is_in_the_graph():
    head = tiny_head()
    cls, box = head((torch.randn(1, 16, 4, 4),), torch.tensor([[0, 0, 0, 60, 60.0]]))
    (cls.sum() + box.sum()).backward()
    g = head.reg_conv.weight.grad.reshape(8, 9, -1)  # (delta, cell, in)
    assert g[:4].abs().sum() == 0 and g[4:].abs().sum() > 0


def test_head_rejects_wrong_input_channels():
    with pytest.raises(ValueError, match="expects a map"):
        tiny_head()((torch.randn(1, 8, 4, 4),), torch.zeros(0, 5))
    with pytest.raises(TypeError, match="reg_class_agnostic"):
        tiny_head(reg_class_agnostic=False)


def test_rank_hardest_returns_largest_losses_first():
    loss = torch.tensor([0.1, 3.0, 0.5, 2.0, 0.0])
    assert rank_hardest(loss, 3).tolist() == [1, 3, 2]
    assert sorted(rank_hardest(loss, 10).tolist()) == [0, 1, 2, 3, 4]


def test_hardest_roi_sampler_keeps_the_n_highest_loss_rois_whatever_their_label():
    head = tiny_head()
    n = 10
    bg = torch.tensor([-8.0, 9, 1, 8, 2, 7, 3, 6, 4, 5])
    gt_inds = torch.ones(n, dtype=torch.long)
    gt_inds[[0, 5, 6]] = 0  # negatives; 0 is a hard one (low bg logit)
    gt_inds[3] = -1  # ignored: never kept
    res = hardest_sample(head, bg, gt_inds)
    # CE = log(3 + e^bg) - 0 for positives (label 0), log(3 + e^bg) - bg for negatives
    ce = torch.log(3 + bg.exp()) - torch.where(gt_inds == 0, bg, torch.zeros(n))
    ce[3] = -1.0
    want = ce.topk(4).indices
    assert sorted(res.pos_inds.tolist() + res.neg_inds.tolist()) == sorted(want.tolist())
    assert set(res.neg_inds.tolist()) == {int(i) for i in want if gt_inds[i] == 0}
    assert len(res.neg_inds) >= 1  # negatives compete with positives, no fixed fraction


def test_hardest_roi_sampler_with_the_real_head_keeps_the_highest_cls_plus_box_losses():
    from mmdet.models.task_modules.assigners import MaxIoUAssigner

    torch.manual_seed(0)
    roi_head = MODELS.build(
        dict(
            type="RFCNRoIHead",
            bbox_head=dict(type="RFCNBBoxHead", num_classes=3, in_channels=16, mid_channels=8, k=3),
            train_cfg=dict(
                assigner=dict(
                    type="MaxIoUAssigner",
                    pos_iou_thr=0.5,
                    neg_iou_thr=0.5,
                    min_pos_iou=0.5,
                    match_low_quality=False,
                ),
                sampler=dict(type="HardestRoISampler", num=12),
                pos_weight=-1,
            ),
        )
    )
    sampler = roi_head.bbox_sampler
    feats = (torch.randn(1, 16, 8, 8),)
    xy = torch.rand(40, 2) * 90
    priors = torch.cat([xy, xy + 10 + torch.rand(40, 2) * 40], 1)
    gt = InstanceData(
        bboxes=torch.tensor([[10, 10, 50, 60.0], [60, 40, 120, 100]]), labels=torch.tensor([1, 2])
    )
    assign = MaxIoUAssigner(0.5, 0.5, 0.5, match_low_quality=False).assign(
        InstanceData(priors=priors), gt
    )
    res = sampler.sample(assign, InstanceData(priors=priors), gt, feats=feats)
    assert len(res.pos_inds) + len(res.neg_inds) == 12 and len(res.pos_inds) > 0
    cand = torch.cat([gt.bboxes, priors])  # what the sampler ranked: gt first (no ignore)
    labels = assign.labels.clone()
    labels[assign.gt_inds == 0] = 3
    sampler._gt_bboxes = gt.bboxes
    loss = sampler.roi_losses(cand, assign.gt_inds, labels, feats)
    kept = torch.cat([res.pos_inds, res.neg_inds])
    rest = torch.ones(len(cand), dtype=torch.bool)
    rest[kept] = False
    assert loss[kept].min() >= loss[rest].max()
