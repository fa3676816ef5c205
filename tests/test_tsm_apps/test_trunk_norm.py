"""The trunks' normalisation option: BatchNorm (statistics of the batch while training) or
GroupNorm (statistics of each frame alone), wired into every normalisation layer of a ResNet."""

import pytest
import torch
from torch import nn

from tsm_apps.models.backbone import BackboneConfig, build_trunk
from tsm_apps.models.trunk import ResNet, norm_layer


def frames(n=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, 3, 32, 48, generator=g)


def norms(net):
    return [(k, m) for k, m in net.named_modules() if isinstance(m, (nn.BatchNorm2d, nn.GroupNorm))]


def test_norm_layer_kinds_and_groups():
    assert type(norm_layer("batch", 16)) is nn.BatchNorm2d
    gn = norm_layer("group", 64, groups=8)
    assert type(gn) is nn.GroupNorm and (gn.num_groups, gn.num_channels) == (8, 64)
    assert norm_layer("group", 16).num_groups == 16  # fewer channels than 32 groups: one each
    assert norm_layer("group", 64).num_groups == 32
    with pytest.raises(ValueError, match="norm must be one of"):
        norm_layer("layer", 16)
    with pytest.raises(ValueError, match="24 channels do not split into 16 groups"):
        norm_layer("group", 24, groups=16)
    with pytest.raises(ValueError, match="norm_groups must be >= 1"):
        norm_layer("group", 16, groups=0)


def test_group_norm_replaces_every_batch_norm_under_the_same_names():
    torch.manual_seed(0)
    bn = ResNet("resnet18", 0.25)
    gn = ResNet("resnet18", 0.25, norm="group", norm_groups=8)
    assert not any(isinstance(m, nn.BatchNorm2d) for m in gn.modules())
    bn_layers, gn_layers = norms(bn), norms(gn)
    # stem + 2 per BasicBlock x 8 + 3 downsample branches (res3, res4, res5 widen)
    assert len(gn_layers) == 1 + 16 + 3
    assert [k for k, _ in gn_layers] == [k for k, _ in bn_layers]
    assert all(type(m) is nn.GroupNorm and m.num_groups == 8 for _, m in gn_layers)
    assert [m.num_channels for _, m in gn_layers] == [m.num_features for _, m in bn_layers]


def test_group_norm_normalises_each_frame_alone_while_training():
    x = frames()
    for norm, independent in (("batch", False), ("group", True)):
        torch.manual_seed(0)
        net = ResNet("resnet18", 0.25, norm=norm, norm_groups=8).train()
        with torch.no_grad():
            together = net(x)[:1]
            alone = net(x[:1])
        assert torch.allclose(together, alone, atol=1e-5) is independent, norm


def test_backbone_config_carries_the_norm_to_the_trunk():
    trunk = build_trunk(
        BackboneConfig(arch="resnet18", width=0.25, shift="online", num_segments=4, norm="group")
    )
    gn = [m for _, m in norms(trunk)]
    assert gn and all(type(m) is nn.GroupNorm for m in gn)
    assert [m.num_groups for m in gn[:1]] == [16]  # default 32 groups, 16-channel stem
    with pytest.raises(ValueError, match="norm must be one of"):
        BackboneConfig(arch="resnet18", norm="instance")
    with pytest.raises(ValueError, match="ResNets only"):
        BackboneConfig(arch="mobilenetv2", norm="group")


@pytest.mark.parametrize("arch", ["resnet18", "resnet50"])
def test_zero_init_residual_starts_every_block_as_the_identity(arch):
    """Gamma 0 on each residual branch's last norm layer: a block without a downsample returns
    relu(its input) exactly (its input is already >= 0), one with a downsample returns
    relu(downsample(input)) -- for BatchNorm and GroupNorm alike."""
    from torchvision.models.resnet import BasicBlock, Bottleneck

    from tsm_apps.models.trunk import ResNet, zero_init_residual_

    for norm in ("batch", "group"):
        torch.manual_seed(0)
        net = ResNet(arch, width=0.125, norm=norm).eval()
        blocks = [m for m in net.modules() if isinstance(m, (BasicBlock, Bottleneck))]
        last = {id(b.bn3 if isinstance(b, Bottleneck) else b.bn2) for b in blocks}
        with torch.no_grad():  # trained-looking norms; the last ones' beta stays at its init 0
            for m in net.modules():
                if isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                    m.weight.uniform_(0.5, 1.5)
                    if id(m) not in last:
                        m.bias.normal_()
                if isinstance(m, nn.BatchNorm2d):
                    m.running_mean.normal_()
                    m.running_var.uniform_(0.5, 2.0)
        assert zero_init_residual_(net) == len(blocks) == (8 if arch == "resnet18" else 16)
        x = torch.randn(2, 3, 64, 64)
        with torch.no_grad():
            h = net.maxpool(net.relu(net.bn1(net.conv1(x))))
            for block in blocks:
                skip = h if block.downsample is None else block.downsample(h)
                out = block(h)
                assert torch.equal(out, torch.relu(skip))
                h = out


def test_zero_init_residual_needs_a_resnet():
    from tsm_apps.models.trunk import MobileNetV2, zero_init_residual_

    with pytest.raises(ValueError, match="MobileNetV2 has no ResNet block"):
        zero_init_residual_(MobileNetV2())


def test_the_multigrid_preset_trains_from_identity_blocks():
    """``model.zero_init_residual`` (the multigrid preset: SlowFast's ZERO_INIT_FINAL_BN) zeroes
    each block's last BN gamma of the recognizer ``tsm train`` builds; off, they start at 1."""
    from tsm_apps.train.config import load_config
    from tsm_apps.train.model import build_model

    for preset, gamma in (("multigrid", 0.0), ("kinetics", 1.0)):
        cfg = load_config(preset=preset, arch="resnet18", width=0.125, pretrained="")
        model, _ = build_model(cfg, 5, torch.device("cpu"))
        last = [model.backbone.layer1[0].bn2.weight, model.backbone.layer4[1].bn2.weight]
        assert all(bool((w == gamma).all()) for w in last), preset
        assert bool((model.backbone.layer1[0].bn1.weight == 1).all())
