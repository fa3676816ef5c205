"""R-FCN online hard example mining: keep the ``num`` RoIs with the highest loss (no fraction).

mmdet's ``OHEMSampler`` mines positives and negatives separately under a positive fraction,
ranking by the classification loss. R-FCN (and the OHEM paper's single-stage variant) instead
evaluates every candidate RoI of an image without gradients and keeps the ``num`` (128) with
the largest total loss, ``cls + box`` (box loss on positives only), whatever their labels.
:class:`HardestRoISampler` does that inside mmdet's sampler interface: it subclasses
``OHEMSampler`` (same ``context`` = the RoI head, same ``feats`` argument) and replaces the two
per-label mining steps by one joint ranking.
"""

from __future__ import annotations

import torch
from mmdet.models.task_modules.samplers import OHEMSampler
from mmdet.registry import TASK_UTILS
from mmdet.structures.bbox import bbox2roi
from torch import Tensor


def rank_hardest(loss: Tensor, num: int) -> Tensor:
    """Indices of the ``num`` largest entries of ``loss`` ``(R,)`` (all if fewer), hardest first."""
    if loss.dim() != 1:
        raise ValueError(f"loss must be (R,), got {tuple(loss.shape)}")
    return loss.topk(min(num, loss.numel())).indices


@TASK_UTILS.register_module()
class HardestRoISampler(OHEMSampler):
    """Keep the ``num`` highest-loss RoIs among all proposals (+ ground truth) of an image.

    Args:
        num: RoIs kept per image (128 in R-FCN).
        context: the RoI head (mmdet passes it; needs ``_bbox_forward`` and ``bbox_head``).
        add_gt_as_proposals: add the ground-truth boxes to the candidates (mmdet default).
        with_box_loss: rank by ``cls + box`` loss (R-FCN); ``False`` ranks by ``cls`` only.

    RoIs assigned ``-1`` (ignored) are never kept. Fewer than ``num`` candidates: all kept.
    """

    def __init__(
        self,
        num: int = 128,
        context=None,
        add_gt_as_proposals: bool = True,
        with_box_loss: bool = True,
        **kwargs,
    ) -> None:
        if context is None:
            raise ValueError(
                "HardestRoISampler needs context= the RoI head (mmdet passes it "
                "when it builds train_cfg.sampler)"
            )
        super().__init__(
            num=num,
            pos_fraction=1.0,
            context=context,
            neg_pos_ub=-1,
            add_gt_as_proposals=add_gt_as_proposals,
            **kwargs,
        )
        self.with_box_loss = with_box_loss
        self._gt_bboxes = None
        self._hard_neg = None

    def sample(self, assign_result, pred_instances, gt_instances, **kwargs):
        """mmdet's sampling (gt added as proposals) with the joint hardest-``num`` selection."""
        self._gt_bboxes = gt_instances.bboxes
        try:
            return super().sample(assign_result, pred_instances, gt_instances, **kwargs)
        finally:
            self._gt_bboxes = self._hard_neg = None

    def roi_losses(self, bboxes: Tensor, gt_inds: Tensor, labels: Tensor, feats) -> Tensor:
        """Per-RoI loss ``(R,)`` of candidates ``bboxes (R, 4)`` without gradients."""
        head = self.bbox_head
        with torch.no_grad():
            out = self.context._bbox_forward(feats, bbox2roi([bboxes]))
            cls_score, bbox_pred = out["cls_score"], out["bbox_pred"]
            loss = head.loss_cls(cls_score, labels, reduction_override="none")
            pos = (labels >= 0) & (labels < head.num_classes)
            if self.with_box_loss and pos.any() and bbox_pred is not None:
                gt = self._gt_bboxes[gt_inds[pos] - 1]
                target = head.bbox_coder.encode(bboxes[pos], gt)
                box = head.loss_bbox(bbox_pred[pos], target, reduction_override="none")
                loss = loss.clone()
                loss[pos] += box.sum(dim=1)
        return loss

    def _sample_pos(self, assign_result, num_expected, bboxes=None, feats=None, **kwargs):
        """Rank all non-ignored candidates; return the kept positives, remember the negatives."""
        gt_inds = assign_result.gt_inds
        cand = torch.nonzero(gt_inds >= 0, as_tuple=False).flatten()
        if cand.numel() == 0:
            self._hard_neg = cand
            return cand
        labels = assign_result.labels[cand].clone()
        labels[gt_inds[cand] == 0] = self.bbox_head.num_classes
        loss = self.roi_losses(bboxes[cand], gt_inds[cand], labels, feats)
        keep = cand[rank_hardest(loss, self.num)]
        is_pos = gt_inds[keep] > 0
        self._hard_neg = keep[~is_pos]
        return keep[is_pos]

    def _sample_neg(self, assign_result, num_expected, bboxes=None, feats=None, **kwargs):
        if self._hard_neg is None:
            raise RuntimeError("HardestRoISampler._sample_neg called before _sample_pos")
        return self._hard_neg
