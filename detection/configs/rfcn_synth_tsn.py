# TSN R-FCN on the synthetic ImageNet-VID set: rfcn_synth_tsm.py without the temporal shift
# (identical network, data, schedule and seed; see that file for the commands).
_base_ = ['./rfcn_synth_tsm.py']

model = dict(backbone=dict(shift=None))
