"""Tiny ClipRFCN model configs and inputs shared by the detection tests (and usable by others)."""

import torch
from mmdet.models.task_modules.assigners import AssignResult
from mmdet.registry import MODELS, TASK_UTILS
from mmdet.structures import DetDataSample
from mmengine.structures import InstanceData

import detection  # noqa: F401

H = W = 64


def tiny_cfg(shift="online", t=2, test_mode="stream", ohem=16, loss_frames="key") -> dict:
    return dict(
        type="ClipRFCN",
        test_mode=test_mode,
        rpn_feat_index=0,
        loss_frames=loss_frames,
        backbone=dict(
            type="TSMResNet",
            arch="resnet18",
            width=0.125,
            num_segments=t,
            shift=shift,
            out_indices=(2, 3),
            norm_eval=False,
        ),
        rpn_head=dict(
            type="RPNHead",
            in_channels=32,
            feat_channels=16,
            anchor_generator=dict(
                type="AnchorGenerator", scales=[1, 2, 4], ratios=[0.5, 1.0, 2.0], strides=[16]
            ),
            bbox_coder=dict(
                type="DeltaXYWHBBoxCoder", target_means=[0.0] * 4, target_stds=[1.0] * 4
            ),
            loss_cls=dict(type="CrossEntropyLoss", use_sigmoid=True, loss_weight=1.0),
            loss_bbox=dict(type="SmoothL1Loss", beta=1.0 / 9.0, loss_weight=1.0),
        ),
        roi_head=dict(
            type="RFCNRoIHead",
            bbox_head=dict(
                type="RFCNBBoxHead", num_classes=3, in_channels=64, mid_channels=16, k=3
            ),
        ),
        train_cfg=dict(
            rpn=dict(
                assigner=dict(
                    type="MaxIoUAssigner",
                    pos_iou_thr=0.7,
                    neg_iou_thr=0.3,
                    min_pos_iou=0.3,
                    match_low_quality=True,
                ),
                sampler=dict(
                    type="RandomSampler", num=32, pos_fraction=0.5, add_gt_as_proposals=False
                ),
                allowed_border=-1,
                pos_weight=-1,
                debug=False,
            ),
            rpn_proposal=dict(
                nms_pre=200,
                max_per_img=40,
                nms=dict(type="nms", iou_threshold=0.7),
                min_bbox_size=0,
            ),
            rcnn=dict(
                assigner=dict(
                    type="MaxIoUAssigner",
                    pos_iou_thr=0.5,
                    neg_iou_thr=0.5,
                    min_pos_iou=0.5,
                    match_low_quality=False,
                ),
                sampler=dict(type="HardestRoISampler", num=ohem),
                pos_weight=-1,
                debug=False,
            ),
        ),
        test_cfg=dict(
            rpn=dict(
                nms_pre=200,
                max_per_img=40,
                nms=dict(type="nms", iou_threshold=0.7),
                min_bbox_size=0,
            ),
            rcnn=dict(score_thr=0.0, nms=dict(type="nms", iou_threshold=0.5), max_per_img=20),
        ),
    )


def build(**kw):
    torch.manual_seed(0)
    return MODELS.build(tiny_cfg(**kw))


def samples(video="a", frames=(0, 1), boxes=((8, 8, 40, 36), (20, 16, 60, 56)), key=-1):
    """Data samples of ``frames`` of ``video``; the one at position ``key`` (default the last,
    as a clip ending at its key frame) has ``clip_key=True``."""
    out = []
    key = key % len(frames) if frames else 0
    for j, f in enumerate(frames):
        s = DetDataSample(
            metainfo=dict(
                img_shape=(H, W),
                ori_shape=(H, W),
                pad_shape=(H, W),
                batch_input_shape=(H, W),
                scale_factor=(1.0, 1.0),
                video=video,
                frame_id=f,
                img_id=f"{video}/{f}",
                clip_key=j == key,
            )
        )
        s.gt_instances = InstanceData(
            bboxes=torch.tensor(boxes, dtype=torch.float), labels=torch.tensor([0, 2])
        )
        out.append(s)
    return out


def frames(n, seed=0):
    return torch.randn(n, 3, H, W, generator=torch.Generator().manual_seed(seed))


class FixedLossContext:
    """A stand-in RoI head for the OHEM sampler: RoI ``i`` (its x1 is ``i``) gets background
    logit ``bg[i]``, all other logits and box deltas 0, so its cross-entropy is a known function
    of ``bg[i]`` and its label."""

    def __init__(self, head, bg):
        self.bbox_head, self.bg = head, bg

    def _bbox_forward(self, feats, rois):
        cls = torch.zeros(rois.shape[0], self.bbox_head.num_classes + 1)
        cls[:, -1] = self.bg[rois[:, 1].long()]
        return dict(cls_score=cls, bbox_pred=torch.zeros(rois.shape[0], 4))


def hardest_sample(head, bg, gt_inds, num: int = 4, with_box_loss: bool = False):
    """``HardestRoISampler`` on RoIs ``[i, 0, i + 20, 20]`` (``i`` < ``len(bg)``) against one
    ground-truth box ``[0, 0, 30, 20]`` of class 0, with :class:`FixedLossContext` losses."""
    n = len(bg)
    sampler = TASK_UTILS.build(
        dict(
            type="HardestRoISampler",
            num=num,
            add_gt_as_proposals=False,
            with_box_loss=with_box_loss,
        ),
        default_args=dict(context=FixedLossContext(head, bg)),
    )
    priors = torch.stack(
        [
            torch.arange(n, dtype=torch.float),
            torch.zeros(n),
            torch.arange(n) + 20.0,
            torch.full((n,), 20.0),
        ],
        1,
    )
    labels = torch.where(gt_inds > 0, 0, -1)
    return sampler.sample(
        AssignResult(1, gt_inds, torch.ones(n), labels=labels),
        InstanceData(priors=priors),
        InstanceData(bboxes=torch.tensor([[0, 0, 30, 20.0]]), labels=torch.tensor([0])),
        feats=None,
    )
