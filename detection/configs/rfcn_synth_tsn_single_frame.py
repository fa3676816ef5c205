# TSN R-FCN on the synthetic ImageNet-VID set, trained single-frame as the paper's 2D R-FCN:
# rfcn_synth_tsn.py with clips of one frame (the same key frames, labels and losses, without
# their context). Not the demo's baseline: with from-scratch BatchNorm in training mode
# (rfcn_synth_tsm.py: frozen_stages=-1, norm_eval=False) its BN statistics come from one image
# a step where online TSM's come from a 4-frame clip, so against TSM it compares two
# normalisations as well as the shift (a glare or blurred key frame is normalised alone here,
# with its clean neighbours in TSM); docs/results.md section 4.9 measures what that was worth.
_base_ = ["./rfcn_synth_tsn.py"]

clip_len = 1
model = dict(backbone=dict(shift=None, num_segments=clip_len))
train_dataloader = dict(batch_sampler=dict(clip_len=clip_len))
