"""Checkpoint loading: our format, official TSM repository and mmaction2 layouts.

Each foreign layout is produced by an independent reference written here in the style of the
official code (torchvision ResNet / a flat MobileNetV2 with TemporalShift wrappers holding the
conv in ``.net``, ``fc`` replaced by Dropout, ``new_fc``, average consensus), saved under the
official file name, loaded with our loader and compared logit for logit.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
import torchvision
from torch import nn
from torchvision.models.mobilenetv2 import InvertedResidual

from tsm_apps import build_recognizer
from tsm_apps.checkpoint.reading import load_checkpoint, save_checkpoint

H = 32


class RefShift(nn.Module):
    """Official-style shift: zeros + slice assignment, then the wrapped ``net``."""

    def __init__(self, net: nn.Module, t: int, div: int) -> None:
        super().__init__()
        self.net, self.t, self.div = net, t, div

    def forward(self, x):
        nt, c, h, w = x.size()
        x = x.view(nt // self.t, self.t, c, h, w)
        fold = c // self.div
        out = torch.zeros_like(x)
        out[:, :-1, :fold] = x[:, 1:, :fold]
        out[:, 1:, fold : 2 * fold] = x[:, :-1, fold : 2 * fold]
        out[:, :, 2 * fold :] = x[:, :, 2 * fold :]
        return self.net(out.view(nt, c, h, w))


class RefTPool(nn.Module):
    def __init__(self, net: nn.Module, t: int) -> None:
        super().__init__()
        self.net, self.t = net, t

    def forward(self, x):
        nt, c, h, w = x.size()
        x = x.view(nt // self.t, self.t, c, h, w).transpose(1, 2)
        x = nn.functional.max_pool3d(x, (3, 1, 1), (2, 1, 1), (1, 0, 0))
        return self.net(x.transpose(1, 2).contiguous().view(nt // 2, c, h, w))


class RefNonLocal(nn.Module):
    """Official NL3DWrapper: ``block`` then an embedded-Gaussian non-local block ``nl``."""

    def __init__(self, block: nn.Module, t: int) -> None:
        super().__init__()
        c = block.bn3.num_features
        self.block, self.t, self.ci = block, t, c // 2
        self.nl = nn.Module()
        self.nl.g = nn.Sequential(nn.Conv3d(c, c // 2, 1), nn.MaxPool3d((1, 2, 2)))
        self.nl.theta = nn.Conv3d(c, c // 2, 1)
        self.nl.phi = nn.Sequential(nn.Conv3d(c, c // 2, 1), nn.MaxPool3d((1, 2, 2)))
        self.nl.W = nn.Sequential(nn.Conv3d(c // 2, c, 1), nn.BatchNorm3d(c))

    def forward(self, x):
        x = self.block(x)
        nt, c, h, w = x.size()
        x = x.view(nt // self.t, self.t, c, h, w).transpose(1, 2)
        b = x.size(0)
        g = self.nl.g(x).view(b, self.ci, -1).permute(0, 2, 1)
        th = self.nl.theta(x).view(b, self.ci, -1).permute(0, 2, 1)
        ph = self.nl.phi(x).view(b, self.ci, -1)
        y = torch.matmul(torch.softmax(torch.matmul(th, ph), -1), g).permute(0, 2, 1).contiguous()
        x = self.nl.W(y.view(b, self.ci, *x.size()[2:])) + x
        return x.transpose(1, 2).contiguous().view(nt, c, h, w)


class RefIR(nn.Module):
    """Official MobileNetV2 InvertedResidual: Conv/BN/ReLU6 directly in ``conv``."""

    def __init__(self, conv: nn.Sequential, res: bool) -> None:
        super().__init__()
        self.conv, self.res = conv, res

    def forward(self, x):
        return x + self.conv(x) if self.res else self.conv(x)


def official_mobilenet(t: int, div: int) -> nn.Module:
    tv = torchvision.models.mobilenet_v2(weights=None)
    feats = []
    for m in tv.features:
        if isinstance(m, InvertedResidual):
            flat = [
                layer
                for sub in m.conv
                for layer in (sub if isinstance(sub, nn.Sequential) else [sub])
            ]
            m = RefIR(nn.Sequential(*flat), m.use_res_connect)
            if len(m.conv) == 8 and m.res:
                m.conv[0] = RefShift(m.conv[0], t, div)
        feats.append(m)
    net = nn.Module()
    net.features, net.classifier = nn.Sequential(*feats), nn.Dropout(0.5)
    net.forward = lambda x: net.classifier(net.features(x).mean(3).mean(2))
    return net


class RefTSN(nn.Module):
    """The official ``TSN`` module (ops/models.py) for RGB input and average consensus."""

    def __init__(
        self, arch, num_class, t, div=8, place="blockres", nl=False, tpool=False, shift=True
    ):
        super().__init__()
        self.t = t // 2 if tpool else t
        if arch == "mobilenetv2":
            self.base_model, dim = official_mobilenet(t, div), 1280
        else:
            self.base_model = getattr(torchvision.models, arch)(weights=None)
            segs = [t] + [self.t] * 3
            for name, seg in zip(("layer1", "layer2", "layer3", "layer4"), segs):
                stage = getattr(self.base_model, name)
                for i, b in enumerate(stage if shift else []):
                    if place == "blockres":
                        b.conv1 = RefShift(b.conv1, seg, div)
                    else:
                        stage[i] = RefShift(b, seg, div)
            if nl:
                for stage, idx in (
                    (self.base_model.layer2, (0, 2)),
                    (self.base_model.layer3, (0, 2, 4)),
                ):
                    for i in idx:
                        stage[i] = RefNonLocal(stage[i], t)
            if tpool:
                self.base_model.layer2 = RefTPool(self.base_model.layer2, t)
            dim = self.base_model.fc.in_features
            self.base_model.fc = nn.Dropout(0.5)
        self.new_fc = nn.Linear(dim, num_class)

    def forward(self, x):  # (N, T, 3, H, W)
        out = self.new_fc(self.base_model(x.reshape(-1, 3, *x.shape[-2:])))
        return out.view(-1, self.t, out.shape[-1]).mean(1)


def randomize(model: nn.Module, seed: int = 0) -> nn.Module:
    """Random BN statistics and affine parameters, a classifier giving O(1) logits; eval mode."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.BatchNorm2d, nn.BatchNorm3d)):
                for p, lo in ((m.weight, 0.5), (m.running_var, 0.5)):
                    p.copy_(torch.rand(p.shape, generator=g) + lo)
                for p in (m.bias, m.running_mean):
                    p.copy_(0.1 * torch.randn(p.shape, generator=g))
            elif isinstance(m, nn.Linear):
                m.weight.copy_(torch.randn(m.weight.shape, generator=g) / m.in_features)
    return model.eval()


def to_mmaction2(sd: dict) -> dict:
    """mmaction2 ResNetTSM/TSMHead names (ConvModule ``conv``/``bn``) for official keys."""
    out = {}
    for k, v in sd.items():
        k = k.replace("module.", "").replace("new_fc.", "cls_head.fc_cls.")
        k = re.sub(r"^base_model\.conv1\.", "backbone.conv1.conv.", k)
        k = re.sub(r"^base_model\.bn1\.", "backbone.conv1.bn.", k)
        k = k.replace("base_model.", "backbone.")
        k = re.sub(r"\.conv(\d)\.", r".conv\1.conv.", k) if ".layer" in k else k
        k = re.sub(r"\.bn(\d)\.", r".conv\1.bn.", k)
        k = k.replace("downsample.0.", "downsample.conv.").replace(
            "downsample.1.", "downsample.bn."
        )
        out[k] = v
    return out


def clips(t: int, n: int = 2) -> torch.Tensor:
    return torch.randn(n, t, 3, H, H, generator=torch.Generator().manual_seed(1))


OFFICIAL_CASES = [  # file name, reference kwargs, T
    ("TSM_kinetics_RGB_resnet18_shift8_blockres_avg_segment4_e50.pth", {}, 4),
    (
        "TSM_something_RGB_resnet18_shift4_block_avg_segment4_e45.pth",
        {"div": 4, "place": "block"},
        4,
    ),
    ("TSM_kinetics_RGB_resnet18_shift8_blockres_tpool_avg_segment4_e50.pth", {"tpool": True}, 4),
    ("TSM_kinetics_RGB_resnet18_avg_segment2_e50.pth", {"shift": False}, 2),
    ("TSM_kinetics_RGB_resnet50_shift8_blockres_avg_segment2_e100_dense_nl.pth", {"nl": True}, 2),
    ("TSM_kinetics_RGB_mobilenetv2_shift8_blockres_avg_segment2_e100_dense.pth", {}, 2),
]


@pytest.mark.parametrize("name,kw,t", OFFICIAL_CASES, ids=[c[0][4:-4] for c in OFFICIAL_CASES])
def test_official_checkpoint_gives_official_logits(tmp_path, name, kw, t):
    torch.manual_seed(0)
    arch = name.split("_")[3]
    ref = randomize(RefTSN(arch, 7, t, **kw))
    sd = {"module." + k: v for k, v in ref.state_dict().items()}  # DataParallel
    ckpt = {"epoch": 50, "arch": arch, "state_dict": sd, "best_prec1": 71.2}
    torch.save(ckpt, tmp_path / name, _use_new_zipfile_serialization=False)  # 2019-era format
    model = load_checkpoint(tmp_path / name)
    assert not model.training and model.config.num_classes == 7
    assert model.config.num_segments == t
    x = clips(t)
    with torch.no_grad():
        diff = (model(x) - ref(x)).abs().max().item()
    assert diff <= 1e-5, diff


def test_mmaction2_checkpoint_and_bare_state_dict(tmp_path):
    torch.manual_seed(0)
    ref = randomize(RefTSN("resnet18", 5, 4, div=4), seed=3)
    meta = {
        "cfg": "model = dict(backbone=dict(type='ResNetTSM', depth=18, num_segments=4, "
        "shift_div=4, shift_place='blockres'), cls_head=dict(num_segments=4))",
        "epoch": 3,
        "best": np.float64(0.5),
        "hist": np.arange(3),
    }  # numpy meta loads
    torch.save({"state_dict": to_mmaction2(ref.state_dict()), "meta": meta}, tmp_path / "a.pth")
    torch.save(ref.state_dict(), tmp_path / "bare.pth")  # official layout, no file-name info
    x = clips(4)
    with torch.no_grad():
        mm = load_checkpoint(tmp_path / "a.pth")
        assert (mm.config.arch, mm.config.fold_div, mm.config.num_segments) == ("resnet18", 4, 4)
        assert (mm(x) - ref(x)).abs().max().item() <= 1e-5
        bare = load_checkpoint(tmp_path / "bare.pth", num_segments=4, fold_div=4)
        assert (bare(x) - ref(x)).abs().max().item() <= 1e-5


def test_our_format_round_trip_with_overrides(tmp_path):
    torch.manual_seed(0)
    model = randomize(build_recognizer("mobilenetv2", 4, num_segments=4, width=0.5))
    save_checkpoint(tmp_path / "m.pt", model, meta={"epoch": 2}, optimizer={"lr": 0.1})
    x = clips(4)
    with torch.no_grad():
        same = load_checkpoint(tmp_path / "m.pt")
        assert torch.equal(same(x), model(x))
        online = load_checkpoint(tmp_path / "m.pt", num_segments=2, shift="online")
        expected = build_recognizer("mobilenetv2", 4, num_segments=2, shift="online", width=0.5)
        expected.load_state_dict(model.state_dict())
        expected.eval()
        assert online.config.num_segments == 2 and online.config.shift == "online"
        assert torch.equal(online(x[:, :2]), expected(x[:, :2]))
    with pytest.raises(ValueError, match="recognizer config: unknown keys"):
        load_checkpoint(tmp_path / "m.pt", segments=2)
