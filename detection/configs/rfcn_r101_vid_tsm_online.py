# Online-TSM R-FCN, ResNet-101, ImageNet VID (+ DET): the TSM paper's detection setup
# (table 9: online TSM 76.3 mAP, slow 83.4 / medium 74.8 / fast 56.0; R-FCN 74.7).
#
# Data (paths relative to data_root, the ILSVRC2015 devkit folder):
#   VID train: ImageSets/VID/train.txt, one line per training snippet `<snippet> 1` (all its
#     frames), e.g. `cat ImageSets/VID/train_*.txt | awk '{print $1, 1}' | sort -u`; as in the
#     FGFA recipe, 15 evenly spaced key frames per snippet (frames_per_video=15), each trained
#     as the clip of `clip_len` consecutive frames around it (ClipBatchSampler).
#   DET train: ImageSets/DET/train_30classes.txt, lines `<image> <n>` relative to Data/DET/train
#     (images holding one of the 30 VID classes; n < 0 lines are skipped), one-frame clips.
#   Test: ImageSets/VID/val.txt (every val frame, online: frame by frame in video order).
# Images: shorter side 600, longer side at most 1000 (FGFA/DFF). No random flip: a flip would
#   have to be identical for all frames of a clip, which mmdet's per-image RandomFlip is not.
# Schedule (FGFA R-FCN recipe): SGD momentum 0.9, weight decay 5e-4, lr 1e-3 for 4 GPUs x 1
#   clip (scale linearly with the number of clips per iteration), x0.1 after 80k of 120k
#   iterations; a 500-iteration linear warm-up (ours). Launch on several GPUs/nodes with
#   `torchrun --nproc-per-node 4 -m tsm_apps.cli detect train <this file>`.
# The backbone starts from an ImageNet/Kinetics TSM checkpoint given by
#   model.backbone.checkpoint=<path> (nothing is downloaded); without it, from scratch.
# data_root: `--cfg-options data_root=DIR/` re-points every dataset (tsm detect train/test).
_base_ = ['./_base_/rfcn_r101.py', './_base_/vid_runtime.py']

data_root = 'data/ILSVRC2015/'
dataset_type = 'ImageNetVIDDataset'
clip_len = 4  # frames per training clip; equals model.backbone.num_segments
backend_args = None
stream_meta = ('img_id', 'img_path', 'ori_shape', 'img_shape', 'scale_factor', 'video',
               'frame_id')

model = dict(backbone=dict(num_segments=clip_len))

train_pipeline = [
    dict(type='LoadImageFromFile', backend_args=backend_args),
    dict(type='LoadAnnotations', with_bbox=True),
    dict(type='Resize', scale=(1000, 600), keep_ratio=True),
    dict(type='PackDetInputs', meta_keys=stream_meta),
]
test_pipeline = [
    dict(type='LoadImageFromFile', backend_args=backend_args),
    dict(type='Resize', scale=(1000, 600), keep_ratio=True),
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
        ann_file='ImageSets/VID/train.txt',
        det_ann_file='ImageSets/DET/train_30classes.txt',
        frames_per_video=15,
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
        ann_file='ImageSets/VID/val.txt',
        test_mode=True,
        pipeline=test_pipeline))
test_evaluator = dict(type='VIDMetric')
# No validation during training (it would cost the small runs a full test pass); evaluate the
# final checkpoint with `tsm detect test` (several GPUs: torchrun, VideoShardSampler).
val_dataloader = None
val_evaluator = None
val_cfg = None

train_cfg = dict(type='IterBasedTrainLoop', max_iters=120000)
test_cfg = dict(type='TestLoop')

optim_wrapper = dict(
    type='OptimWrapper',
    optimizer=dict(type='SGD', lr=0.001, momentum=0.9, weight_decay=0.0005),
    clip_grad=dict(max_norm=35, norm_type=2))
param_scheduler = [
    dict(type='LinearLR', start_factor=0.01, by_epoch=False, begin=0, end=500),
    dict(type='MultiStepLR', by_epoch=False, begin=0, end=120000, milestones=[80000],
         gamma=0.1),
]
auto_scale_lr = dict(enable=False, base_batch_size=4)
