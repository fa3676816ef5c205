# R-FCN ResNet-101 of the MSRA code (FGFA/DFF resnet_v1_101_rfcn), the head of the TSM paper's
# table 9; model only. Dai et al.'s variant (RPN on res4, 1x1 reducing conv): rfcn_r101.py.
#   backbone: online TSM ResNet-101 (shift every other block, fold_div 8), res5 stride 1 dilation
#     2 (stride 16); conv1 + res2 frozen, BN frozen (statistics and gamma/beta), as FIXED_PARAMS
#     conv1, res2, bn. Needs ImageNet weights: model.backbone.checkpoint=<resnet101 .pth>.
#   neck: feat_conv_3x3 (3x3, dilation 6, 2048 -> 1024, ReLU); channels [0:512] -> RPN (two
#     1x1 convs: 2A softmax scores, 4A deltas), [512:1024] -> 7x7 position-sensitive maps
#     (7*7*31 scores, 7*7*8 class-agnostic deltas), quantised PS RoI pooling at 1/16, vote.
#   training: RPN 256 anchors (0.7/0.3, and each GT's best anchors), smooth-L1 beta 1 on
#     deltas normalised by (0.1, 0.1, 0.4, 0.4); 300 proposals (NMS 0.7 of 6000), OHEM 128 RoIs
#     by cls + box loss; test: 300 proposals, NMS 0.3, 300 detections per image.
#   Every value and its source: docs/recipes.md.
# TSN baseline: model.backbone.shift=None.
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
        mean=[123.675, 116.28, 103.53],  # torchvision ImageNet weights (MSRA: BGR means only)
        std=[58.395, 57.12, 57.375],
        bgr_to_rgb=True,
        pad_size_divisor=16,
        batch_augments=[dict(type="ClipHorizontalFlip", clip_len=clip_len, prob=0.5)],
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
        out_indices=(3,),
        frozen_stages=1,
        norm_eval=True,
        frozen_bn_affine=True,
        checkpoint=None,
        init_cfg=None,
    ),
    neck=dict(
        type="RFCNSplitNeck", in_channels=2048, out_channels=1024, rpn_channels=512, dilation=6
    ),
    rpn_head=dict(
        type="PlainRPNHead",
        in_channels=512,
        feat_channels=512,
        anchor_generator=dict(
            type="AnchorGenerator", scales=[8, 16, 32], ratios=[0.5, 1.0, 2.0], strides=[16]
        ),
        bbox_coder=dict(
            type="DeltaXYWHBBoxCoder",
            target_means=[0.0, 0.0, 0.0, 0.0],
            target_stds=[0.1, 0.1, 0.4, 0.4],
        ),  # FGFA ANCHOR_STDS with NORMALIZE_RPN
        loss_cls=dict(type="CrossEntropyLoss", use_sigmoid=False, loss_weight=1.0),
        # MSRA's smooth_l1 scalar 1.0 (beta = 1/scalar^2) on the normalised targets above;
        # its scalar 3.0 (beta 1/9) is for un-normalised targets only
        loss_bbox=dict(type="SmoothL1Loss", beta=1.0, loss_weight=1.0),
    ),
    roi_head=dict(
        type="RFCNRoIHead",
        bbox_head=dict(
            type="RFCNBBoxHead",
            num_classes=num_classes,
            in_channels=512,
            mid_channels=None,
            k=7,
            spatial_scale=1.0 / 16,
            pool_mode="pool",
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
                min_pos_iou=0.0,  # MSRA assign_anchor: each GT's best anchors, any IoU
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
