"""Optimizer policies: the official TSM ``get_optim_policies`` groups, by hand."""

import pytest
import torch
from torch import nn

from tsm_apps import build_recognizer
from tsm_apps.train.config import load_config
from tsm_apps.train.model import model_and_optimizer
from tsm_apps.train.solver.batchnorm import freeze_bn_parameters
from tsm_apps.train.solver.groups import official_groups, optim_groups


class Tiny(nn.Module):
    """conv (bias) -> BN -> conv (bias) -> BN -> fc, in that module order."""

    def __init__(self) -> None:
        super().__init__()
        self.c1, self.bn1 = nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4)
        self.c2, self.bn2 = nn.Conv2d(4, 4, 1), nn.BatchNorm2d(4)
        self.fc = nn.Linear(4, 3)


def _by_name(groups: list) -> dict:
    return {
        g["name"]: ([id(p) for p in g["params"]], g["lr_mult"], g["weight_decay"]) for g in groups
    }


def test_official_groups_rgb_and_flow_by_hand():
    m = Tiny()
    ids = lambda *ps: [id(p) for p in ps]  # noqa: E731
    # ops/models.py 243-260: (params, lr_mult, decay_mult x wd); RGB: first conv x1 / bias x2
    want = {
        "first_conv_weight": (ids(m.c1.weight), 1.0, 1e-4),
        "first_conv_bias": (ids(m.c1.bias), 2.0, 0.0),
        "normal_weight": (ids(m.c2.weight), 1.0, 1e-4),
        "normal_bias": (ids(m.c2.bias), 2.0, 0.0),
        "BN scale/shift": (ids(m.bn1.weight, m.bn1.bias, m.bn2.weight, m.bn2.bias), 1.0, 0.0),
        "lr5_weight": (ids(m.fc.weight), 5.0, 1e-4),
        "lr10_bias": (ids(m.fc.bias), 10.0, 0.0),
    }
    assert _by_name(official_groups(m, 1e-4)) == want
    flow = _by_name(official_groups(m, 1e-4, flow=True))  # first conv x5, its bias x10
    assert flow["first_conv_weight"][1:] == (5.0, 1e-4) and flow["first_conv_bias"][1:] == (
        10.0,
        0.0,
    )
    assert {k: v for k, v in flow.items() if not k.startswith("first")} == {
        k: v for k, v in want.items() if not k.startswith("first")
    }


def test_official_groups_fine_tuned_fc_and_partial_bn():
    m = Tiny()
    # fc_lr5 off (main.py 63: fine-tuned from the same data set): the fc joins the others
    got = _by_name(official_groups(m, 1e-4, fc_new=False))
    assert got["normal_weight"][0] == [id(m.c2.weight), id(m.fc.weight)]
    assert got["normal_bias"][0] == [id(m.c2.bias), id(m.fc.bias)]
    assert "lr5_weight" not in got and "lr10_bias" not in got
    freeze_bn_parameters(m, "partial")  # partial BN: only the first BN's scale/shift train
    assert _by_name(official_groups(m, 1e-4))["BN scale/shift"][0] == [
        id(m.bn1.weight),
        id(m.bn1.bias),
    ]
    m.extra = nn.LayerNorm(4)
    with pytest.raises(ValueError, match="no rule for trainable parameters of LayerNorm"):
        official_groups(m, 1e-4)
    with pytest.raises(ValueError, match="optim_policy must be one of"):
        optim_groups(m, "caffe", 1e-4)


def test_the_recognizers_first_conv_is_the_stem_and_every_parameter_has_one_group():
    torch.manual_seed(0)
    m = build_recognizer("resnet18", 3, 2, "offline", width=0.125, dropout=0.5, in_channels=10)
    groups = {g["name"]: g for g in official_groups(m, 1e-4, flow=True)}
    assert groups["first_conv_weight"]["params"] == [m.backbone.conv1.weight]
    assert groups["first_conv_weight"]["lr_mult"] == 5.0
    assert "first_conv_bias" not in groups and "normal_bias" not in groups  # ResNet convs: none
    assert groups["lr5_weight"]["params"] == [m.fc.weight]
    assert groups["lr10_bias"]["params"] == [m.fc.bias]
    n = sorted(id(p) for g in groups.values() for p in g["params"])
    assert n == sorted(id(p) for p in m.parameters())


def test_the_config_picks_the_policy_and_lr_of_each_group():
    cfg = load_config(
        arch="resnet18",
        width=0.125,
        segments=2,
        size=32,
        modality="flow",
        optim_policy="tsm_official",
        batch_size=16,
        lr_per_8=0.01,
        weight_decay=5e-4,
        nesterov=True,
    )
    model, opt = model_and_optimizer(cfg, 3, torch.device("cpu"))
    got = {g["name"]: (round(g["lr"], 12), g["weight_decay"]) for g in opt.param_groups}
    # base LR 0.01 x 16 / 8 = 0.02; flow: first conv x5 (decay), BN x1 no decay, fc x5 / x10
    assert got == {
        "first_conv_weight": (0.1, 5e-4),
        "normal_weight": (0.02, 5e-4),
        "BN scale/shift": (0.02, 0.0),
        "lr5_weight": (0.1, 5e-4),
        "lr10_bias": (0.2, 0.0),
    }
    assert opt.defaults["nesterov"] is True and opt.defaults["momentum"] == 0.9
