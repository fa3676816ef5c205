# Online-TSM R-FCN, ResNet-101, ImageNet VID (+ DET): the TSM paper's detection setup
# (table 9: online TSM 76.3 mAP, slow 83.4 / medium 74.8 / fast 56.0; R-FCN 74.7) with the
# MSRA R-FCN head (_base_/rfcn_r101_msra.py) and FGFA's data and solver. Every value and its
# source: docs/recipes.md (tests/test_detection/test_recipe_table.py holds them to it).
#
# Data: data_root = the ILSVRC2015 folder with FGFA/MSRA's lists in ImageSets/ (paths relative
#   to Data/VID and Data/DET, as FGFA reads them):
#   train: ImageSets/VID_train_15frames.txt (one line per key frame: 15 per snippet, each
#     trained as a clip of `clip_len` consecutive frames ending at it, ClipBatchSampler
#     key_position='end'; the first frames of a video: its first clip_len frames; the losses on
#     the key frame only, as FGFA trains one labelled key image per GPU) +
#     ImageSets/DET_train_30classes.txt (DET images with a VID class, one-frame clips; objects
#     of the other 170 DET classes dropped). Key frames without objects are skipped. Boxes on or
#     past the image border are clipped to it (FGFA's imagenet_vid.py).
#   test: ImageSets/VID_val_videos.txt (all 176,126 val frames, online: frame by frame in video
#     order, VideoShardSampler); boxes scored as the XML gives them.
# Images: shorter side 600, longer side at most 1000 (FGFA); horizontal flip of whole clips.
# Weights: model.backbone.checkpoint=<ImageNet ResNet-101: torchvision state dict or mmpretrain
#   checkpoint> (required: conv1/res2 and BN are frozen; nothing is downloaded). BN keeps the
#   checkpoint's statistics and gamma/beta while training (norm_eval, frozen_bn_affine), so no
#   frame's normalisation depends on the other frames of its batch or clip.
# Solver (detection/schedule.py): FGFA's code on 4 GPUs x 1 image: SGD momentum 0.9, lr 2.5e-4
#   and wd 5e-4 on gradients summed over the 4 GPUs = lr 1e-3 and wd 1.25e-4 on DDP's mean over
#   4 processes x 1 clip; 2 epochs of the 111,473 listed images and their 111,473 mirrors
#   (FLIP) = 111,472 iterations, x0.1 after 74,296 (1.333 epochs); no warm-up, no clipping.
#   Other process counts P x N clips: fgfa_solver(P, N) (lr 2.5e-4*B, wd 5e-4/B, iterations
#   for batch B = P*N); `tsm detect train` warns when the run's batch differs from `solver`.
#   torchrun --nproc-per-node 4 -m tsm_apps.cli detect train <this file>
#       --cfg-options model.backbone.checkpoint=resnet101.pth
# Overrides: data_root=DIR/ re-points every dataset; img_scale=W,H every Resize (tsm detect).
_base_ = ["./_base_/rfcn_r101_msra.py", "./_base_/vid_runtime.py"]
from detection.schedule import fgfa_solver  # noqa: E402  (after _base_: a plain config)

data_root = "data/ILSVRC2015/"
dataset_type = "ImageNetVIDDataset"
clip_len = 4  # frames per training clip; equals model.backbone.num_segments
img_scale = (1000, 600)
solver = fgfa_solver(processes=4, clips_per_process=1)
max_iters = solver["max_iters"]
backend_args = None
stream_meta = ("img_id", "img_path", "ori_shape", "img_shape", "scale_factor", "video", "frame_id")
train_meta = stream_meta + ("clip_key",)  # the key frame of each clip gets the losses

model = dict(backbone=dict(num_segments=clip_len))

train_pipeline = [
    dict(type="LoadImageFromFile", backend_args=backend_args),
    dict(type="LoadAnnotations", with_bbox=True),
    dict(type="Resize", scale=img_scale, keep_ratio=True),
    dict(type="PackDetInputs", meta_keys=train_meta),
]
test_pipeline = [
    dict(type="LoadImageFromFile", backend_args=backend_args),
    dict(type="Resize", scale=img_scale, keep_ratio=True),
    dict(type="PackDetInputs", meta_keys=stream_meta),
]

train_dataloader = dict(
    batch_size=1,  # clips per GPU
    num_workers=2,
    persistent_workers=True,
    sampler=dict(type="DefaultSampler", shuffle=True),
    batch_sampler=dict(type="ClipBatchSampler", clip_len=clip_len, key_position="end"),
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        ann_file="ImageSets/VID_train_15frames.txt",
        det_ann_file="ImageSets/DET_train_30classes.txt",
        filter_cfg=dict(filter_empty_gt=True),
        clip_boxes=True,  # boxes on or past the border clipped to the image (FGFA)
        on_bad_frame="skip",
        pipeline=train_pipeline,
    ),
)
test_dataloader = dict(
    batch_size=1,  # frames in video order: the online stream keeps its buffers across them
    num_workers=2,
    persistent_workers=True,
    drop_last=False,
    sampler=dict(type="VideoShardSampler"),  # whole videos per GPU, frames in order
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        ann_file="ImageSets/VID_val_videos.txt",
        test_mode=True,
        clip_boxes=False,  # boxes as the XML gives them (FGFA's evaluation reads them so)
        pipeline=test_pipeline,
    ),
)
# Motion IoU computed from the val XML (FGFA's rule), the default because FGFA's file only covers
# the whole val split in VID_val_videos.txt order (a subset or another list has none); on the same
# snippets the two agree (tsm_apps/data/motion.py). To read FGFA's published file instead
# (lib/dataset/imagenet_vid_groundtruth_motion_iou.mat of its repository):
# dict(type='VIDMetric', motion_iou_file='/path/imagenet_vid_groundtruth_motion_iou.mat')
test_evaluator = dict(type="VIDMetric")
# No validation during training; evaluate the final checkpoint with `tsm detect test`.
val_dataloader = None
val_evaluator = None
val_cfg = None

train_cfg = dict(type="IterBasedTrainLoop", max_iters=max_iters)
test_cfg = dict(type="TestLoop")

optim_wrapper = dict(
    type="OptimWrapper",
    optimizer=dict(type="SGD", lr=solver["lr"], momentum=0.9, weight_decay=solver["weight_decay"]),
    clip_grad=None,
)
param_scheduler = [
    dict(
        type="MultiStepLR",
        by_epoch=False,
        begin=0,
        end=max_iters,
        milestones=solver["milestones"],
        gamma=0.1,
    ),
]
auto_scale_lr = dict(enable=False, base_batch_size=4)  # the solver is already for 4 x 1
