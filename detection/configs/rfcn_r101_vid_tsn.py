# TSN R-FCN baseline, ResNet-101, ImageNet VID (+ DET): the same network, data and schedule as
# rfcn_r101_vid_tsm_online.py without the temporal shift (the paper's 2D R-FCN, 74.7 mAP).
# Frames still arrive as clips (the batch layout of the TSM config), so the two train on
# exactly the same samples.
_base_ = ['./rfcn_r101_vid_tsm_online.py']

model = dict(backbone=dict(shift=None))
