"""The MSRA R-FCN pieces: dilated shared conv split 512/512, RPN without its 3x3 conv, R-FCN maps
read without a reducing conv, frozen BN affine, clip-wise horizontal flip."""

import pytest
import torch
import torch.nn.functional as F
from mmdet.registry import MODELS
from mmdet.structures import DetDataSample
from mmengine.structures import InstanceData

from detection import TSMResNet
from detection.msra import ClipHorizontalFlip, PlainRPNHead, RFCNSplitNeck
from model_fixtures import frames, samples, tiny_cfg


def test_split_neck_is_a_dilated_conv_with_relu_then_a_channel_split():
    neck = RFCNSplitNeck(in_channels=1, out_channels=3, rpn_channels=1, dilation=6)
    with torch.no_grad():
        neck.conv.weight.fill_(1.0)
        neck.conv.bias.copy_(torch.tensor([0.0, 0.0, -2.0]))
    x = torch.zeros(1, 1, 21, 21)
    x[0, 0, 10, 10] = 1.0  # an impulse sees the 3x3 taps 6 pixels apart
    rpn, rfcn = neck((x,))
    assert rpn.shape == (1, 1, 21, 21) and rfcn.shape == (1, 2, 21, 21)
    hits = {(int(i), int(j)) for i, j in torch.nonzero(rpn[0, 0])}
    assert hits == {(10 + dy, 10 + dx) for dy in (-6, 0, 6) for dx in (-6, 0, 6)}
    assert rpn.sum() == 9 and rfcn[0, 0].sum() == 9 and rfcn[0, 1].max() == 0  # ReLU(1 - 2)
    y = torch.randn(2, 1, 9, 11, generator=torch.Generator().manual_seed(0))
    ref = F.relu(F.conv2d(y, neck.conv.weight, neck.conv.bias, padding=6, dilation=6))
    assert torch.allclose(torch.cat(neck([y]), 1), ref)
    with pytest.raises(ValueError, match=r"expects \(N, 1, h, w\), got \(1, 2, 4, 4\)"):
        neck([torch.zeros(1, 2, 4, 4)])


def test_plain_rpn_head_has_only_pointwise_convs():
    cfg = tiny_cfg()["rpn_head"]
    cfg.update(
        type="PlainRPNHead",
        in_channels=8,
        loss_cls=dict(type="CrossEntropyLoss", use_sigmoid=False, loss_weight=1.0),
    )
    head = MODELS.build(cfg)
    assert isinstance(head, PlainRPNHead) and isinstance(head.rpn_conv, torch.nn.Identity)
    assert head.rpn_cls.weight.shape == (9 * 2, 8, 1, 1)  # 2A softmax scores
    assert head.rpn_reg.weight.shape == (9 * 4, 8, 1, 1)
    x = torch.relu(torch.randn(1, 8, 5, 5, generator=torch.Generator().manual_seed(0)))
    cls, reg = head.forward_single(x)
    x2 = x.clone()
    x2[0, :, 0, 0] += 1.0
    cls2, _ = head.forward_single(x2)
    changed = (cls2 - cls).abs().sum(1)[0] > 0
    assert changed[0, 0] and changed.sum() == 1  # no 3x3 conv: only that pixel


def test_rfcn_head_without_reducing_conv_reads_the_map_directly():
    head = MODELS.build(
        dict(
            type="RFCNBBoxHead",
            num_classes=3,
            in_channels=8,
            mid_channels=None,
            k=3,
            pool_mode="pool",
        )
    )
    assert isinstance(head.reduce, torch.nn.Identity)
    assert head.cls_conv.in_channels == 8 and head.cls_conv.out_channels == 9 * 4
    cls, box = head(torch.randn(1, 8, 6, 6), torch.tensor([[0.0, 0, 0, 63, 63]]))
    assert cls.shape == (1, 4) and box.shape == (1, 4)


def test_frozen_bn_affine():
    b = TSMResNet(
        arch="resnet18",
        width=0.125,
        frozen_bn_affine=True,
        norm_eval=True,
        allow_random_frozen=True,
    ).train()
    bns = [m for m in b.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    assert bns and all(not p.requires_grad for m in bns for p in m.parameters())
    assert all(not m.training for m in bns)
    assert b.trunk.layer4[0].conv2.weight.requires_grad


def _clip_batch(n_clips, t, h=6, w=8, pad_w=10):
    x = torch.arange(n_clips * t * 3 * h * pad_w, dtype=torch.float).view(n_clips * t, 3, h, pad_w)
    data = []
    for i in range(n_clips * t):
        s = DetDataSample(metainfo=dict(img_shape=(h, w)))
        s.gt_instances = InstanceData(
            bboxes=torch.tensor([[1.0, 2.0, 3.5, 5.0]]), labels=torch.tensor([0])
        )
        data.append(s)
    return x, data


def test_clip_flip_mirrors_each_frame_within_its_extent_and_its_boxes():
    x, data = _clip_batch(2, 2)
    out, data = ClipHorizontalFlip(clip_len=2, prob=1.0)(x, data)
    assert torch.equal(out[:, :, :, :8], x[:, :, :, :8].flip(-1))
    assert torch.equal(out[:, :, :, 8:], x[:, :, :, 8:])  # padding stays on the right
    assert data[0].gt_instances.bboxes.tolist() == [[4.5, 2.0, 7.0, 5.0]]  # x1' = 8 - 3.5
    assert data[3].metainfo["flip"] is True
    x, data = _clip_batch(1, 2)
    out, data = ClipHorizontalFlip(clip_len=2, prob=0.0)(x, data)
    assert torch.equal(out, x) and data[0].gt_instances.bboxes.tolist() == [[1.0, 2.0, 3.5, 5.0]]
    with pytest.raises(ValueError, match="not whole clips of clip_len=2"):
        ClipHorizontalFlip(clip_len=2)(*_clip_batch(1, 3))


def test_clip_flip_is_drawn_once_per_clip():
    torch.manual_seed(0)
    x, data = _clip_batch(16, 3)
    _, data = ClipHorizontalFlip(clip_len=3, prob=0.5)(x, data)
    flips = [[data[c * 3 + i].metainfo["flip"] for i in range(3)] for c in range(16)]
    assert all(len(set(f)) == 1 for f in flips)
    assert {f[0] for f in flips} == {True, False}


def test_tiny_msra_rfcn_trains():
    cfg = tiny_cfg()
    cfg["backbone"].update(out_indices=(3,))
    cfg["neck"] = dict(type="RFCNSplitNeck", in_channels=64, out_channels=32, rpn_channels=16)
    cfg["rpn_head"].update(type="PlainRPNHead", in_channels=16)
    cfg["roi_head"]["bbox_head"].update(in_channels=16, mid_channels=None, pool_mode="pool")
    torch.manual_seed(0)
    model = MODELS.build(cfg).train()
    total, _ = model.parse_losses(model.loss(frames(2), samples("a")))
    total.backward()
    assert torch.isfinite(total)
    assert model.neck.conv.weight.grad.abs().sum() > 0
    assert model.rpn_head.rpn_cls.weight.grad.abs().sum() > 0
