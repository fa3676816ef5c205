import pytest
import torch

from tsm_apps import build_recognizer
from tsm_apps.train.config import load_config
from tsm_apps.train.solver.batchnorm import bn_layers, freeze_bn_parameters, set_train_mode
from tsm_apps.train.solver.groups import param_groups
from tsm_apps.train.solver.optimizer import build_optimizer
from tsm_apps.train.solver.schedule import (
    LRSchedule,
    base_lr,
    run_schedule,
    scaled_lr,
    set_lr,
    step_lrs,
    warmup_ratio,
)


def _model():
    torch.manual_seed(0)
    return build_recognizer("resnet18", 3, 2, "offline", width=0.125, dropout=0.0)


def test_linear_scaling_rule():
    assert scaled_lr(0.00125, 8) == pytest.approx(0.00125)
    assert scaled_lr(0.00125, 1536) == pytest.approx(0.24)  # the 15-minute Kinetics batch
    with pytest.raises(ValueError, match="global batch"):
        scaled_lr(0.1, 0)


def test_warmup_then_cosine():
    s = LRSchedule(base_lr=1.0, epochs=10, warmup_epochs=2, warmup_start=0.1, min_ratio=0.0)
    assert s(0) == pytest.approx(0.1)
    assert s(1) == pytest.approx(0.55)
    assert s(2) == pytest.approx(1.0)
    assert s(6) == pytest.approx(0.5)  # half-way through the cosine
    assert s(10) == pytest.approx(0.0)
    assert LRSchedule(2.0, 4, min_ratio=0.1)(4) == pytest.approx(0.2)


def test_step_and_constant_policies():
    # the official script: --lr 0.02 --lr_steps 20 40 (adjust_learning_rate: 0.1 ** #steps <= e)
    s = LRSchedule(0.02, 50, policy="step", steps=(0.0, 20.0, 40.0), lrs=(1.0, 0.1, 0.01))
    assert [s(e) for e in (0, 19.99, 20, 39.5, 40, 49.9)] == pytest.approx(
        [0.02, 0.02, 0.002, 0.002, 0.0002, 0.0002]
    )
    assert step_lrs([20, 40]) == ((0.0, 20.0, 40.0), (1.0, 0.1, 0.010000000000000002))
    c = LRSchedule(0.001, 30, warmup_epochs=2, warmup_start=0.5, policy="constant")
    assert [c(e) for e in (0, 1, 2, 29)] == pytest.approx([0.0005, 0.00075, 0.001, 0.001])
    with pytest.raises(ValueError, match="lr policy must be one of"):
        LRSchedule(0.1, 10, policy="poly")
    with pytest.raises(ValueError, match="steps must start at 0"):
        LRSchedule(0.1, 10, policy="step", steps=(0.0, 5.0), lrs=(1.0,))


def test_no_weight_decay_on_bn_and_bias_and_fc_multiplier():
    m = _model()
    groups = {g["name"]: g for g in param_groups(m, 1e-4, fc_lr_mult=5.0)}
    assert set(groups) == {"decay_x1", "no_decay_x1", "decay_x5", "no_decay_x5"}
    bn_ids = {id(p) for b in bn_layers(m) for p in b.parameters()}
    assert all(id(p) not in bn_ids and p.dim() == 4 for p in groups["decay_x1"]["params"])
    assert {id(p) for p in groups["no_decay_x1"]["params"]} == bn_ids
    assert groups["decay_x5"]["params"] == [m.fc.weight]
    assert groups["no_decay_x5"]["params"] == [m.fc.bias]
    assert groups["no_decay_x1"]["weight_decay"] == 0 and groups["decay_x1"]["weight_decay"] == 1e-4
    n = sum(p.numel() for g in groups.values() for p in g["params"])
    assert n == sum(p.numel() for p in m.parameters())
    opt = build_optimizer(param_groups(m, 1e-4, fc_lr_mult=5.0), "sgd", 0.1)
    set_lr(opt, 0.02)
    assert sorted(g["lr"] for g in opt.param_groups) == pytest.approx([0.02, 0.02, 0.1, 0.1])


def test_partial_bn_keeps_only_the_first_bn_training():
    m = _model()
    freeze_bn_parameters(m, "partial")
    set_train_mode(m, "partial")
    bns = bn_layers(m)
    assert bns[0].training and bns[0].weight.requires_grad
    assert not any(b.training or b.weight.requires_grad for b in bns[1:])
    before = bns[1].running_mean.clone()
    m(torch.randn(2, 2, 3, 32, 32)).sum().backward()
    assert torch.equal(bns[1].running_mean, before)
    names = {g["name"] for g in param_groups(m, 1e-4)}
    assert names == {"decay_x1", "no_decay_x1"}
    assert sum(len(g["params"]) for g in param_groups(m, 1e-4)) == sum(
        p.requires_grad for p in m.parameters()
    )
    with pytest.raises(ValueError, match="bn mode"):
        set_train_mode(m, "sometimes")


def _lr_trainer(tmp_path, world_size: int, **kw):
    from tests.test_tsm_apps.toy_videos import motion_videos
    from tsm_apps.data.dataset import VideoDataset
    from tsm_apps.distributed import DistEnv
    from tsm_apps.train.config import load_config
    from tsm_apps.train.trainer import Trainer

    videos, labels = motion_videos(8, frames=4, size=32)
    tr = VideoDataset.from_tensor(videos, labels, True, 2, 32)
    cfg = load_config(
        **dict(
            dict(
                arch="resnet18",
                width=0.125,
                segments=2,
                size=32,
                work_dir=str(tmp_path),
                progress=False,
                tensorboard=False,
            ),
            **kw,
        )
    )
    return Trainer(cfg, DistEnv(world_size=world_size), torch.device("cpu"), tr, tr, 2)


def test_aavg_step_size_is_the_same_on_1_and_4_learners(tmp_path):
    # AAVG Algorithm 1: the step size does not depend on the learners; 32 clips per learner at
    # 0.00125 per 8 clips: 0.005, also with the documented --batch-size 32 x W on W = 4
    one = _lr_trainer(tmp_path, 1, preset="aavg")
    four = _lr_trainer(tmp_path, 4, preset="aavg", batch_size=128)
    for t in (one, four):
        assert t.schedule.base_lr == pytest.approx(0.005)
        assert [t.schedule(e) for e in (0, 3.5)] == pytest.approx([0.005, 0.005])
        assert [g["lr"] for g in t.optimizer.param_groups] == pytest.approx(
            [0.005] * len(t.optimizer.param_groups)
        )
    # the linear scaling rule, kept as an option, grows with the learners: 0.005 x 4
    glob = _lr_trainer(tmp_path, 4, preset="aavg", batch_size=128, lr_scaling="global")
    assert glob.schedule.base_lr == pytest.approx(0.02)


def test_kinetics_warmup_starts_at_one_workers_lr(tmp_path):
    # Goyal et al. §2.2: from one worker's LR (8 clips: 0.00125) to k times it over 5 epochs;
    # one process with accum_steps 4 stands for 4 workers of 2 clips: 0.0003125 -> 0.00125
    t = _lr_trainer(tmp_path, 1, preset="kinetics", accum_steps=4, segments=2, epochs=100)
    assert [t.schedule(e) for e in (0, 2.5, 5)] == pytest.approx(
        [0.0003125, 0.0003125 + (0.00125 - 0.0003125) / 2, 0.00125]
    )
    # 4 processes of 8 clips: global LR 0.005, the warm-up from one worker's 0.00125
    cfg = load_config(preset="kinetics", batch_size=32)
    s = run_schedule(cfg, 4, 100, "cosine", (0.0,), (1.0,))
    assert (s.base_lr, s(0)) == pytest.approx((0.005, 0.00125))
    # the fraction rule does not look at the processes
    s = run_schedule(
        load_config(preset="kinetics", batch_size=32, warmup_rule="fraction"),
        4,
        100,
        "cosine",
        (0.0,),
        (1.0,),
    )
    assert s(0) == pytest.approx(0.0005)


def test_lr_rules_by_hand_and_bad_values():
    assert base_lr(0.00125, 128, 4, "process") == pytest.approx(0.005)
    assert base_lr(0.00125, 128, 4, "global") == pytest.approx(0.02)
    assert warmup_ratio("worker", 0.1, 64, 4, 2) == pytest.approx(1 / 8)
    assert warmup_ratio("worker", 0.1, 64, 4, 2, "process") == pytest.approx(1 / 2)
    assert warmup_ratio("fraction", 0.1, 64, 4, 2) == 0.1
    with pytest.raises(ValueError, match="lr scaling must be one of"):
        base_lr(0.1, 8, 1, "local")
    with pytest.raises(ValueError, match="must split evenly into 3 processes"):
        base_lr(0.1, 8, 3, "process")
    with pytest.raises(ValueError, match="warm-up rule must be one of"):
        warmup_ratio("goyal", 0.1, 8)
