"""TSMResNet adapter: shapes, online streaming == clip, causality, freezing, checkpoint init."""

import pytest
import torch
import torchvision
from mmdet.registry import MODELS
from torch import nn

import detection  # noqa: F401
from detection.backbone import TSMResNet
from tsm_apps.checkpoint.reading import save_checkpoint
from tsm_apps.models.recognizer import build_recognizer


def tiny(shift="online", t=4, **kw) -> TSMResNet:
    torch.manual_seed(0)
    cfg = dict(
        type="TSMResNet",
        arch="resnet18",
        width=0.125,
        num_segments=t,
        shift=shift,
        out_indices=(2, 3),
    )
    cfg.update(kw)
    return MODELS.build(cfg).eval()


def clip(t=4, seed=1) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(t, 3, 48, 64, generator=g)


def test_shapes_res5_stride16_dilated():
    net = tiny()
    with torch.no_grad():
        res4, res5 = net(clip())
    assert res4.shape == (4, 32, 3, 4) and res5.shape == (4, 64, 3, 4)
    assert net.out_channels == (32, 64)
    assert net.trunk.layer4[0].conv1.net.dilation == (2, 2)


def test_stream_frame_by_frame_equals_whole_clip_online():
    net, x = tiny(), clip()
    with torch.no_grad():
        whole = net(x)
        state = net.new_state()
        steps = [net.step(x[i : i + 1], state) for i in range(4)]
    for lvl in range(2):
        diff = (torch.cat([s[lvl] for s in steps]) - whole[lvl]).abs().max().item()
        assert diff <= 1e-5


def test_online_is_causal_offline_is_not():
    x = clip()
    y = x.clone()
    y[2] += 1.0
    for shift, changed_frame1 in (("online", False), ("offline", True), (None, False)):
        net = tiny(shift)
        with torch.no_grad():
            a, b = net(x)[-1], net(y)[-1]
        assert torch.equal(a[:2], b[:2]) != changed_frame1, shift
        assert not torch.equal(a[2], b[2])


def test_reset_starts_a_new_video_with_zero_buffers():
    net, x = tiny(), clip()
    with torch.no_grad():
        state = net.new_state()
        first = net.step(x[:1], state)[-1]
        net.step(x[1:2], state)
        assert state.nbytes > 0
        carried = net.step(x[:1], state)[-1]
        state.reset()
        again = net.step(x[:1], state)[-1]
    assert torch.equal(first, again) and not torch.equal(first, carried)


def test_clips_do_not_leak_into_each_other():
    net = tiny(t=2)
    x = clip(4)
    with torch.no_grad():
        both = net(x)[-1]
        second = net(x[2:])[-1]
    assert (both[2:] - second).abs().max() <= 1e-5


def test_bad_input_and_mode_errors():
    net = tiny(t=4)
    with pytest.raises(ValueError, match=r"batch of 3 frames .*num_segments=4"):
        net(clip(3))
    with pytest.raises(ValueError, match=r"\(N\*T, 3, H, W\)"):
        net(torch.zeros(4, 1, 8, 8))
    with pytest.raises(ValueError, match="shift='offline'"):
        tiny("offline").new_state()
    with pytest.raises(ValueError, match="out_indices"):
        tiny(out_indices=(4,))


def test_frozen_stages_and_norm_eval():
    net = tiny(frozen_stages=1, norm_eval=True).train()
    assert not any(p.requires_grad for p in net.trunk.conv1.parameters())
    assert not any(p.requires_grad for p in net.trunk.layer1.parameters())
    assert all(p.requires_grad for p in net.trunk.layer2.parameters())
    assert all(not m.training for m in net.modules() if isinstance(m, torch.nn.BatchNorm2d))
    assert net.trunk.layer2[0].conv1.training  # convs of trainable stages stay in train mode
    free = tiny(frozen_stages=-1, norm_eval=False).train()
    assert all(m.training for m in free.modules() if isinstance(m, torch.nn.BatchNorm2d))


def test_init_from_a_tsm_apps_recognizer_checkpoint(tmp_path):
    torch.manual_seed(3)
    rec = build_recognizer("resnet18", num_classes=5, num_segments=4, shift="online", width=0.125)
    path = save_checkpoint(tmp_path / "rec.pth", rec)
    net = tiny(checkpoint=str(path))
    net.init_weights()
    w = rec.backbone.layer3[1].conv1.net.weight
    assert torch.equal(net.trunk.layer3[1].conv1.net.weight, w)
    wrong = tiny(width=0.25, checkpoint=str(path))
    with pytest.raises(ValueError, match="does not fit"):
        wrong.init_weights()


def test_paper_backbone_r101_streams_like_the_clip():
    torch.manual_seed(0)
    net = TSMResNet(arch="resnet101", num_segments=3, shift="online", out_indices=(2, 3)).eval()
    assert len(net.new_state()) == 18  # every other block of ResNet-101 is shifted
    x = torch.randn(3, 3, 64, 64)
    with torch.no_grad():
        whole = net(x)
        state = net.new_state()
        steps = [net.step(x[i : i + 1], state) for i in range(3)]
    for lvl in range(2):
        got = torch.cat([s[lvl] for s in steps])
        rel = ((got - whole[lvl]).abs().max() / whole[lvl].abs().max()).item()
        assert rel <= 1e-5


def test_init_from_torchvision_and_mmpretrain_imagenet_weights(tmp_path):
    torch.manual_seed(0)
    sd = torchvision.models.resnet18(weights=None).state_dict()
    mm = {("head." + k if k.startswith("fc.") else "backbone." + k): v for k, v in sd.items()}
    torch.save(sd, tmp_path / "tv.pth")
    torch.save({"model": sd}, tmp_path / "tv_model.pth")
    torch.save({"state_dict": mm, "meta": {}}, tmp_path / "mm.pth")
    for name, layout in (("tv", "torchvision"), ("tv_model", "torchvision"), ("mm", "mmpretrain")):
        net = tiny(width=1.0, frozen_stages=1, checkpoint=str(tmp_path / f"{name}.pth"))
        net.init_weights()
        assert net.load_tsm_checkpoint(str(tmp_path / f"{name}.pth")) == {
            "layout": layout,
            "loaded": len(sd) - 2,
            "missing": 0,
            "dropped": 2,
        }  # fc dropped
        assert torch.equal(net.trunk.layer1[0].conv1.net.weight, sd["layer1.0.conv1.weight"])
        assert torch.equal(net.trunk.bn1.running_mean, sd["bn1.running_mean"])
    with pytest.raises(ValueError) as e:
        tiny(width=0.125, checkpoint=str(tmp_path / "tv.pth")).init_weights()
    msg = str(e.value)
    assert "(torchvision layout) does not fit" in msg and "\n" not in msg
    assert "weights_only" not in msg.replace(str(tmp_path), "")


def test_frozen_random_weights_are_refused_unless_allowed():
    for kw in (dict(frozen_stages=1, norm_eval=False), dict(frozen_stages=-1, norm_eval=True)):
        with pytest.raises(ValueError, match="no backbone checkpoint but .*allow_random_frozen"):
            tiny(**kw).init_weights()
        tiny(allow_random_frozen=True, **kw).init_weights()
    tiny(frozen_stages=-1, norm_eval=False).init_weights()  # from scratch, nothing frozen


def test_group_norm_backbone_streams_like_the_clip_even_while_training():
    """GroupNorm (``norm='group'``): no BatchNorm left, and a frame's maps do not depend on the
    other frames of the batch, so the online stream equals the whole clip in training mode too
    (with BatchNorm the clip's batch statistics make them differ)."""
    x = clip()
    for norm, same in (("batch", False), ("group", True)):
        net = tiny(norm=norm, norm_groups=4, frozen_stages=-1, norm_eval=False).train()
        kinds = {type(m) for m in net.modules() if isinstance(m, (nn.BatchNorm2d, nn.GroupNorm))}
        assert kinds == ({nn.GroupNorm} if same else {nn.BatchNorm2d})
        with torch.no_grad():
            whole = net(x)
            state = net.new_state()
            steps = [net.step(x[i : i + 1], state) for i in range(4)]
        diff = max((torch.cat([s[lvl] for s in steps]) - whole[lvl]).abs().max() for lvl in (0, 1))
        assert bool(diff <= 1e-5) is same, (norm, diff)


def test_the_adapter_is_the_librarys_backbone_with_the_same_keys():
    """One multi-level TSM backbone: the mmdet adapter is ``tsm_apps``' ``Backbone``, and its
    weights keep the names detection checkpoints were written with (``trunk.<torchvision
    name>``, ``.net`` on shifted convs)."""
    from tsm_apps.models.backbone import Backbone, build_backbone

    net = tiny()
    assert isinstance(net, Backbone)
    keys = list(net.state_dict())
    assert keys[:3] == ["trunk.conv1.weight", "trunk.bn1.weight", "trunk.bn1.bias"]
    assert "trunk.layer1.0.conv1.net.weight" in keys and "trunk.layer4.1.bn2.running_var" in keys
    lib = build_backbone(
        "resnet18",
        4,
        "online",
        width=0.125,
        strides=(1, 2, 2, 1),
        dilations=(1, 1, 1, 2),
        out_indices=(2, 3),
    )
    assert list(lib.state_dict()) == keys
    lib.load_state_dict(net.state_dict())
    lib.eval()
    x = clip()
    with torch.no_grad():
        want = net(x)
        assert all(torch.equal(a, b) for a, b in zip(lib(x), want))
        state, got = lib.new_state(), []
        for t in range(4):
            got.append(lib.step(x[t : t + 1], state))
    for level in range(2):  # one frame a call: other conv kernels, so float rounding differs
        diff = (torch.cat([g[level] for g in got]) - want[level]).abs().max().item()
        assert diff <= 1e-5


def test_init_cfg_is_refused_with_the_way_to_give_weights():
    with pytest.raises(ValueError, match="model.backbone.checkpoint"):
        tiny(init_cfg=dict(type="Pretrained", checkpoint="x.pth"))
