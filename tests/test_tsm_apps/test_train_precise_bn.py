"""Precise BN (tsm_apps.train.precise_bn) against statistics computed by hand, and its hook."""

import torch
from torch import nn

from tests.test_tsm_apps.toy_videos import motion_videos
from tsm_apps.data.dataset import VideoDataset
from tsm_apps.distributed import DistEnv
from tsm_apps.train import MultigridConfig, load_config
from tsm_apps.train.hooks import EvaluationHook, MultigridHook, PreciseBNHook
from tsm_apps.train.hooks import precise_bn as hook_module
from tsm_apps.train.precise_bn import precise_bn_
from tsm_apps.train.trainer import Trainer


def _net() -> nn.Sequential:
    torch.manual_seed(0)
    net = nn.Sequential(
        nn.Conv2d(2, 3, 1), nn.BatchNorm2d(3), nn.ReLU(), nn.Conv2d(3, 4, 1), nn.BatchNorm2d(4)
    )
    with torch.no_grad():  # affine parameters away from (1, 0), so a wrong order shows
        net[1].weight.uniform_(0.5, 2.0)
        net[1].bias.uniform_(-1.0, 1.0)
    return net.train()


def _mean_var(values: list) -> tuple:
    """Mean and biased variance per channel of all values of all batches, by hand."""
    y = torch.cat([v.permute(1, 0, 2, 3).reshape(v.shape[1], -1) for v in values], 1).double()
    mean = y.sum(1) / y.shape[1]
    return mean, ((y - mean[:, None]) ** 2).sum(1) / y.shape[1]


def test_precise_bn_sets_the_exact_mean_and_variance_of_all_batches():
    net = _net()
    g = torch.Generator().manual_seed(1)
    xs = [torch.randn(n, 2, 3, 4, generator=g) * 3 + 1 for n in (2, 5, 3)]  # unequal batches
    with torch.no_grad():
        conv1 = [net[0](x) for x in xs]
        # the second BN sees the first one normalising each batch by that batch's statistics
        bn1 = net[1]
        h = []
        for c in conv1:
            m = c.mean((0, 2, 3), keepdim=True)
            v = c.var((0, 2, 3), unbiased=False, keepdim=True)
            w, b = bn1.weight[:, None, None], bn1.bias[:, None, None]
            z = (c - m) / torch.sqrt(v + bn1.eps) * w + b
            h.append(net[3](torch.relu(z)))
    mean1, var1 = _mean_var(conv1)
    mean2, var2 = _mean_var(h)
    assert precise_bn_(net, xs) == 3
    assert torch.allclose(net[1].running_mean.double(), mean1, atol=1e-5)
    assert torch.allclose(net[1].running_var.double(), var1, rtol=1e-5)
    assert torch.allclose(net[4].running_mean.double(), mean2, atol=1e-5)
    assert torch.allclose(net[4].running_var.double(), var2, rtol=1e-5)
    # not the mean of the three batches' statistics (unequal sizes weigh in)
    assert not torch.allclose(
        net[1].running_mean.double(),
        torch.stack([c.mean((0, 2, 3)) for c in conv1]).mean(0).double(),
        atol=1e-3,
    )
    assert [bn.momentum for bn in (net[1], net[4])] == [0.1, 0.1]  # restored
    assert not net[1]._forward_pre_hooks and not net[4]._forward_pre_hooks


def test_fixed_bn_layers_and_an_empty_loader_change_nothing():
    net = _net()
    net[1].eval()  # a fixed (partial BN) layer keeps its statistics
    before = net[1].running_mean.clone(), net[1].running_var.clone(), net[4].running_var.clone()
    x = torch.randn(4, 2, 3, 3)
    precise_bn_(net, [x])
    assert torch.equal(net[1].running_mean, before[0])
    assert torch.equal(net[1].running_var, before[1])
    assert not torch.equal(net[4].running_var, before[2])
    state = {k: v.clone() for k, v in net.state_dict().items()}
    assert precise_bn_(net, []) == 0
    assert all(torch.equal(v, net.state_dict()[k]) for k, v in state.items())


def test_the_hook_runs_before_validation_on_long_cycle_batches(tmp_path, monkeypatch):
    videos, labels = motion_videos(24, frames=8, size=32)
    tr = VideoDataset.from_tensor(videos, labels, True, 4, 32)
    va = VideoDataset.from_tensor(videos[:8], labels[:8], False, 4, 32)
    cfg = load_config(
        arch="resnet18",
        width=0.125,
        segments=4,
        size=32,
        epochs=2,
        batch_size=2,
        dropout=0.0,
        work_dir=str(tmp_path),
        progress=False,
        tensorboard=False,
        precise_bn_batches=3,
        multigrid=MultigridConfig(enabled=True),
    )
    t = Trainer(cfg, DistEnv(), torch.device("cpu"), tr, va, 2)
    assert [type(h) for h in t.hooks[:3]] == [MultigridHook, PreciseBNHook, EvaluationHook]
    seen, orig = [], hook_module.precise_bn_

    def spy(model, batches, forward=None):
        items = list(batches)
        seen.append((t.epoch - 1, [tuple(x.shape) for x in items]))
        return orig(model, items, forward)

    monkeypatch.setattr(hook_module, "precise_bn_", spy)
    t.fit()
    assert [e for e, _ in seen] == list(range(t.epochs))  # after every epoch
    for epoch, shapes in seen:
        b, frames, size = t.plan.long_shape(epoch)
        b = min(b, 24 // cfg.multigrid.min_steps)  # capped: 4 steps an epoch at least
        parts = b // 2  # sub-batch BN: groups of the base batch, 2 clips
        # 3 batches of the epoch's long-cycle shape, each split as the training step splits it
        assert shapes == [(2, frames, 3, size, size)] * (3 * parts), (epoch, shapes)
