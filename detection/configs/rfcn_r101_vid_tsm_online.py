# Online-TSM R-FCN, ResNet-101, ImageNet VID (+ DET): the TSM paper's detection setup
# (table 9: online TSM 76.3 mAP, slow 83.4 / medium 74.8 / fast 56.0; R-FCN 74.7) with the
# MSRA R-FCN head (_base_/rfcn_r101_msra.py) and FGFA's data and solver.
#
# Data: data_root = the ILSVRC2015 folder with FGFA/MSRA's lists in ImageSets/ (paths relative
#   to Data/VID and Data/DET, as FGFA reads them):
#   train: ImageSets/VID_train_15frames.txt (one line per key frame: 15 per snippet, each
#     trained as a clip of `clip_len` consecutive frames ending at it, ClipBatchSampler) +
#     ImageSets/DET_train_30classes.txt (DET images with a VID class, one-frame clips; objects
#     of the other 170 DET classes dropped). Key frames without objects are skipped.
#   test: ImageSets/VID_val_videos.txt (all 176,126 val frames, online: frame by frame in video
#     order, VideoShardSampler).
# Images: shorter side 600, longer side at most 1000 (FGFA); horizontal flip of whole clips.
# Weights: model.backbone.checkpoint=<ImageNet ResNet-101: torchvision state dict or mmpretrain
#   checkpoint> (required: conv1/res2 and BN are frozen; nothing is downloaded).
# Solver (FGFA: lr 2.5e-4 on the gradient summed over 4 GPUs = 1e-3 on the mean of 4 clips):
#   SGD momentum 0.9, weight decay 5e-4, lr 1e-3 for 4 GPUs x 1 clip, x0.1 after 1.333 of 2
#   epochs of the 111,473 listed images (37,148 of 55,737 iterations, FGFA: int(epoch * images / 4)); no warm-up, no clipping.
#   torchrun --nproc-per-node 4 -m tsm_apps.cli detect train <this file>
#       --cfg-options model.backbone.checkpoint=resnet101.pth
# Overrides: data_root=DIR/ re-points every dataset; img_scale=W,H every Resize (tsm detect).
_base_ = ['./_base_/rfcn_r101_msra.py', './_base_/vid_runtime.py']

data_root = 'data/ILSVRC2015/'
dataset_type = 'ImageNetVIDDataset'
clip_len = 4  # frames per training clip; equals model.backbone.num_segments
img_scale = (1000, 600)
max_iters = 55737
backend_args = None
stream_meta = ('img_id', 'img_path', 'ori_shape', 'img_shape', 'scale_factor', 'video',
               'frame_id')

model = dict(backbone=dict(num_segments=clip_len))

train_pipeline = [
    dict(type='LoadImageFromFile', backend_args=backend_args),
    dict(type='LoadAnnotations', with_bbox=True),
    dict(type='Resize', scale=img_scale, keep_ratio=True),
    dict(type='PackDetInputs', meta_keys=stream_meta),
]
test_pipeline = [
    dict(type='LoadImageFromFile', backend_args=backend_args),
    dict(type='Resize', scale=img_scale, keep_ratio=True),
    dict(type='PackDetInputs', meta_keys=stream_meta),
]

train_dataloader = dict(
    batch_size=1,  # clips per GPU
    num_workers=2,
    persistent_workers=True,
    sampler=dict(type='DefaultSampler', shuffle=True),
    batch_sampler=dict(type='ClipBatchSampler', clip_len=clip_len),
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        ann_file='ImageSets/VID_train_15frames.txt',
        det_ann_file='ImageSets/DET_train_30classes.txt',
        filter_cfg=dict(filter_empty_gt=True),
        on_bad_frame='skip',
        pipeline=train_pipeline))
test_dataloader = dict(
    batch_size=1,  # frames in video order: the online stream keeps its buffers across them
    num_workers=2,
    persistent_workers=True,
    drop_last=False,
    sampler=dict(type='VideoShardSampler'),  # whole videos per GPU, frames in order
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        ann_file='ImageSets/VID_val_videos.txt',
        test_mode=True,
        pipeline=test_pipeline))
# Motion IoU computed from the val XML (FGFA's rule); to read FGFA's published file instead:
# dict(type='VIDMetric', motion_iou_file='/path/imagenet_vid_groundtruth_motion_iou.mat')
test_evaluator = dict(type='VIDMetric')
# No validation during training; evaluate the final checkpoint with `tsm detect test`.
val_dataloader = None
val_evaluator = None
val_cfg = None

train_cfg = dict(type='IterBasedTrainLoop', max_iters=max_iters)
test_cfg = dict(type='TestLoop')

optim_wrapper = dict(
    type='OptimWrapper',
    optimizer=dict(type='SGD', lr=0.001, momentum=0.9, weight_decay=0.0005),
    clip_grad=None)
param_scheduler = [
    dict(type='MultiStepLR', by_epoch=False, begin=0, end=max_iters, milestones=[37148],
         gamma=0.1),
]
auto_scale_lr = dict(enable=False, base_batch_size=4)
