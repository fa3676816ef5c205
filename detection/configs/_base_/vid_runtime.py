# Runtime shared by the VID detection configs: mmdet scope, iteration-based logging and
# checkpoints, no visualisation hook (nothing to draw during training), plain environment.
# `tsm detect train` also writes <work_dir>/final.pth and <work_dir>/config.py at the end.
default_scope = "mmdet"

default_hooks = dict(
    timer=dict(type="IterTimerHook"),
    logger=dict(type="LoggerHook", interval=50),
    param_scheduler=dict(type="ParamSchedulerHook"),
    checkpoint=dict(type="CheckpointHook", by_epoch=False, interval=10000, max_keep_ckpts=2),
    sampler_seed=dict(type="DistSamplerSeedHook"),
)

env_cfg = dict(
    cudnn_benchmark=False,
    mp_cfg=dict(mp_start_method="fork", opencv_num_threads=0),
    dist_cfg=dict(backend="nccl"),
)

log_processor = dict(type="LogProcessor", window_size=50, by_epoch=False)
log_level = "INFO"
load_from = None
resume = False
randomness = dict(seed=0)
