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
# Written as what differs from rfcn_r101.py (the same trunk, schedule of RoIs and test settings).
_base_ = ["./rfcn_r101.py"]

model = dict(
    data_preprocessor=dict(
        batch_augments=[dict(type="ClipHorizontalFlip", clip_len=4, prob=0.5)],  # clip_len
    ),
    backbone=dict(out_indices=(3,), frozen_bn_affine=True),
    neck=dict(
        type="RFCNSplitNeck", in_channels=2048, out_channels=1024, rpn_channels=512, dilation=6
    ),
    rpn_head=dict(
        type="PlainRPNHead",
        in_channels=512,
        bbox_coder=dict(target_stds=[0.1, 0.1, 0.4, 0.4]),  # FGFA ANCHOR_STDS, NORMALIZE_RPN
        loss_cls=dict(use_sigmoid=False),
        # MSRA's smooth_l1 scalar 1.0 (beta = 1/scalar^2) on the normalised targets above;
        # its scalar 3.0 (beta 1/9) is for un-normalised targets only
        loss_bbox=dict(beta=1.0),
    ),
    roi_head=dict(
        bbox_head=dict(
            _delete_=True,  # quantised PS RoI pooling: no sampling ratio
            type="RFCNBBoxHead",
            num_classes=30,  # num_classes
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
    # MSRA assign_anchor: each GT's best anchors, any IoU
    train_cfg=dict(rpn=dict(assigner=dict(min_pos_iou=0.0))),
)
