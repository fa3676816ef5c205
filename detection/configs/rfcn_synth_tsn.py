# TSN R-FCN on the synthetic ImageNet-VID set, the baseline of `tsm demo`: rfcn_synth_tsm.py with
# model.backbone.shift=None and nothing else changed. It trains on the same 4-frame clips (one
# clip a step, the losses on the clip's key frame) as the online TSM, so its BatchNorm
# statistics, trained from scratch in training mode, come from the same 4 frames a step; the
# two arms differ only in the shift. At test both run frame by frame in video order with BN's
# running statistics (test_mode='stream'), where TSN is the per-frame 2D network.
# rfcn_synth_tsn_single_frame.py is the paper's single-frame 2D R-FCN (clips of one frame: BN
# statistics of one image); docs/results.md section 4.9 compares the two.
_base_ = ["./rfcn_synth_tsm.py"]

model = dict(backbone=dict(shift=None))
