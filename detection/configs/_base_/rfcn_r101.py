# R-FCN ResNet-101 as in Dai et al.'s paper, model only (the small synthetic configs use it; the
# paper config uses the MSRA code's head, rfcn_r101_msra.py).
# Online TSM backbone (causal shift, every other block of ResNet-101, fold_div 8); res5 with
# stride 1 and dilation 2 (stride 16); RPN on res4 (1024 ch), R-FCN head on res5 (2048 ch ->
# 1x1 conv to 1024 -> 7x7 position-sensitive maps for 31 scores and 8 class-agnostic deltas);
# OHEM keeps the 128 hardest RoIs. TSN baseline: model.backbone.shift=None.
# clip_len = frames per training clip = backbone num_segments = ClipBatchSampler clip_len.
custom_imports = dict(imports=["detection"], allow_failed_imports=False)

clip_len = 4
num_classes = 30

model = dict(
    type="ClipRFCN",
    test_mode="stream",
    loss_frames="key",  # losses on each clip's key frame (its other frames: context)
    rpn_feat_index=0,
    data_preprocessor=dict(
        type="DetDataPreprocessor",
        mean=[123.675, 116.28, 103.53],
        std=[58.395, 57.12, 57.375],
        bgr_to_rgb=True,
        pad_size_divisor=16,
    ),
    backbone=dict(
        type="TSMResNet",
        arch="resnet101",
        width=1.0,
        num_segments=clip_len,
        shift="online",
        fold_div=8,
        place="blockres",
        strides=(1, 2, 2, 1),
        dilations=(1, 1, 1, 2),
        out_indices=(2, 3),
        frozen_stages=1,
        norm_eval=True,
        checkpoint=None,
        init_cfg=None,
    ),
    rpn_head=dict(
        type="RPNHead",
        in_channels=1024,
        feat_channels=512,
        anchor_generator=dict(
            type="AnchorGenerator", scales=[8, 16, 32], ratios=[0.5, 1.0, 2.0], strides=[16]
        ),
        bbox_coder=dict(
            type="DeltaXYWHBBoxCoder",
            target_means=[0.0, 0.0, 0.0, 0.0],
            target_stds=[1.0, 1.0, 1.0, 1.0],
        ),
        loss_cls=dict(type="CrossEntropyLoss", use_sigmoid=True, loss_weight=1.0),
        loss_bbox=dict(type="SmoothL1Loss", beta=1.0 / 9.0, loss_weight=1.0),
    ),
    roi_head=dict(
        type="RFCNRoIHead",
        bbox_head=dict(
            type="RFCNBBoxHead",
            num_classes=num_classes,
            in_channels=2048,
            mid_channels=1024,
            k=7,
            spatial_scale=1.0 / 16,
            pool_mode="align",
            sampling_ratio=2,
            bbox_coder=dict(
                type="DeltaXYWHBBoxCoder",
                target_means=[0.0, 0.0, 0.0, 0.0],
                target_stds=[0.1, 0.1, 0.2, 0.2],
            ),
            loss_cls=dict(type="CrossEntropyLoss", use_sigmoid=False, loss_weight=1.0),
            loss_bbox=dict(type="SmoothL1Loss", beta=1.0, loss_weight=1.0),
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
                ignore_iof_thr=-1,
            ),
            sampler=dict(
                type="RandomSampler",
                num=256,
                pos_fraction=0.5,
                neg_pos_ub=-1,
                add_gt_as_proposals=False,
            ),
            allowed_border=0,
            pos_weight=-1,
            debug=False,
        ),
        rpn_proposal=dict(
            nms_pre=6000, max_per_img=300, nms=dict(type="nms", iou_threshold=0.7), min_bbox_size=0
        ),
        rcnn=dict(
            assigner=dict(
                type="MaxIoUAssigner",
                pos_iou_thr=0.5,
                neg_iou_thr=0.5,
                min_pos_iou=0.5,
                match_low_quality=False,
                ignore_iof_thr=-1,
            ),
            sampler=dict(type="HardestRoISampler", num=128, add_gt_as_proposals=True),
            pos_weight=-1,
            debug=False,
        ),
    ),
    test_cfg=dict(
        rpn=dict(
            nms_pre=6000, max_per_img=300, nms=dict(type="nms", iou_threshold=0.7), min_bbox_size=0
        ),
        rcnn=dict(score_thr=0.001, nms=dict(type="nms", iou_threshold=0.3), max_per_img=300),
    ),
)
