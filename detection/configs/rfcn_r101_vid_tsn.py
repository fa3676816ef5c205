# TSN R-FCN baseline, ResNet-101, ImageNet VID (+ DET): the same network, data and schedule as
# rfcn_r101_vid_tsm_online.py without the temporal shift (the paper's 2D R-FCN, 74.7 mAP),
# trained single-frame as the R-FCN of FGFA's and DFF's code: clips of one frame, the key frame
# (the same key frames, labels and losses as the online-TSM config, without their context).
# Normalisation: BatchNorm frozen at the ImageNet checkpoint's statistics and gamma/beta
# (norm_eval=True, frozen_bn_affine=True), in both configs, so one-frame clips change only the
# context here, not the normalisation (unlike the from-scratch synthetic configs, where BN
# trains on the batch: rfcn_synth_tsn.py keeps TSM's 4-frame clips for that reason).
_base_ = ["./rfcn_r101_vid_tsm_online.py"]

clip_len = 1
model = dict(
    backbone=dict(shift=None, num_segments=clip_len),
    data_preprocessor=dict(
        batch_augments=[dict(type="ClipHorizontalFlip", clip_len=clip_len, prob=0.5)]
    ),
)
train_dataloader = dict(batch_sampler=dict(clip_len=clip_len))
