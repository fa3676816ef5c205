# TSN R-FCN on the synthetic ImageNet-VID set: rfcn_synth_tsm.py without the temporal shift,
# trained single-frame as the paper's 2D R-FCN (clips of one frame: the same key frames, labels
# and losses as the online TSM, without their context); identical network, data, schedule and
# seed otherwise (see that file for the commands).
_base_ = ["./rfcn_synth_tsm.py"]

clip_len = 1
model = dict(backbone=dict(shift=None, num_segments=clip_len))
train_dataloader = dict(batch_sampler=dict(clip_len=clip_len))
