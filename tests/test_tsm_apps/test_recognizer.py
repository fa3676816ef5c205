import subprocess
import sys

import pytest
import torch

from tsm_apps import (
    OnlineRecognizer,
    ShiftState,
    build_backbone,
    build_recognizer,
    shift_modules,
    stepping,
)
from tsm_apps.models.shift.state import bound_slot


def _tiny(shift="online", arch="resnet18", **kw):
    torch.manual_seed(0)
    m = build_recognizer(
        arch, num_classes=5, num_segments=4, shift=shift, width=0.125, dropout=0.0, **kw
    )
    return m.eval()


def test_tsn_and_tsm_share_parameters():
    a, b = _tiny(None), _tiny("offline")
    ka = {k.replace(".net", "") for k in a.state_dict()}
    kb = {k.replace(".net", "") for k in b.state_dict()}
    assert ka == kb
    assert len(shift_modules(a)) == 0 and len(shift_modules(b)) == 8  # every resnet18 block


@pytest.mark.parametrize("arch,n_shift", [("resnet50", 16), ("resnet101", 18), ("mobilenetv2", 10)])
def test_shift_placement(arch, n_shift):
    m = build_recognizer(arch, 3, 2, "offline", width=0.125)
    assert len(shift_modules(m)) == n_shift  # resnet101: every other block (2+2+12+2)


def test_block_placement_and_official_key_names():
    m = build_recognizer("resnet50", 3, 2, "offline", place="block", width=0.125)
    assert "backbone.layer1.0.net.conv1.weight" in m.state_dict()
    m = build_recognizer("resnet50", 3, 2, "offline", width=0.125)
    assert "backbone.layer1.0.conv1.net.weight" in m.state_dict()


def test_forward_shapes_and_temporal_pool_non_local():
    x = torch.randn(2, 4, 3, 64, 64)
    m = build_recognizer(
        "resnet50", 7, 4, "offline", temporal_pool=True, non_local=True, width=0.125
    ).eval()
    assert m.features(x).shape == (2, 2, 256, 2, 2)  # T' = T/2, width 1/8: 2048/8 channels
    assert m(x).shape == (2, 7)
    sd = m.state_dict()
    assert "backbone.layer2.net.0.block.conv1.net.weight" in sd
    assert "backbone.layer3.4.nl.W.1.weight" in sd and "backbone.layer3.1.nl.g.0.weight" not in sd
    with pytest.raises(ValueError, match=r"\(2, 3, 3, 64, 64\)"):
        m(torch.randn(2, 3, 3, 64, 64))


def test_num_segments_changes_at_run_time():
    m = _tiny("offline")
    m.num_segments = 2
    assert all(s.num_segments == 2 for s in shift_modules(m))
    assert m(torch.randn(3, 2, 3, 32, 32)).shape == (3, 5)


def test_online_stream_equals_clip_and_is_causal():
    m = _tiny("online")
    x = torch.randn(2, 4, 3, 48, 48)
    with torch.no_grad():
        clip = m.features(x)  # (2, 4, C, h, w)
        with OnlineRecognizer(m) as online:
            for t in range(4):
                f = online.step_features(x[:, t])
                assert (f - clip[:, t]).abs().max().item() <= 1e-5
            assert online.cache_bytes == sum(b.numel() * 4 for b in online.state.buffers)
        x2 = x.clone()
        x2[:, 3] += 1.0
        clip2 = m.features(x2)
    assert torch.equal(clip2[:, :3], clip[:, :3])
    assert not torch.equal(clip2[:, 3], clip[:, 3])
    # the model holds no stream state: a clip after streaming is the clip before
    assert torch.equal(m.features(x), clip)


def test_streaming_rejects_offline_model_and_the_binding_ends_with_its_block():
    with pytest.raises(ValueError, match="offline"):
        OnlineRecognizer(_tiny("offline"))
    m = _tiny("online")
    mods = shift_modules(m)
    with pytest.raises(RuntimeError):
        with stepping(mods, ShiftState(len(mods))):
            assert bound_slot(mods[0]) is not None
            raise RuntimeError("boom")
    assert all(bound_slot(s) is None for s in mods)
    with pytest.raises(ValueError, match="3 buffers cannot step a model with 8"):
        with stepping(mods, ShiftState(3)):
            pass


def test_resnet50_cache_bytes_224():
    m = build_recognizer("resnet50", 10, 8, "online").eval()
    with OnlineRecognizer(m) as online:
        online.step(torch.zeros(1, 3, 224, 224))
        # one buffer per bottleneck: C_in/8 channels at conv1's input (stride in conv2), fp32
        expect = 4 * (
            56 * 56 * (64 + 3 * 256) // 8
            + 28 * 28 * (3 * 512 + 512) // 8
            + 14 * 14 * (5 * 1024 + 1024) // 8
            + 7 * 7 * (2 * 2048) // 8
        )
        assert expect == 2_809_856
        assert online.cache_bytes == expect


def test_detection_backbone_dilated_res5():
    b = build_backbone(
        "resnet50",
        2,
        "online",
        width=0.125,
        strides=(1, 2, 2, 1),
        dilations=(1, 1, 1, 2),
        out_indices=(2, 3),
    )
    outs = b(torch.randn(2, 3, 64, 96))
    assert [tuple(o.shape) for o in outs] == [(2, 128, 4, 6), (2, 256, 4, 6)]
    assert b.out_channels == (128, 256)


def test_importing_tsm_apps_never_imports_mm_libraries():
    code = (
        "import sys, tsm_apps, tsm_apps.models.online, tsm_apps.models.recognizer;"
        "bad=[m for m in sys.modules if m.split('.')[0] in ('mmdet','mmengine','mmcv')];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_output_stride_16_and_8_give_finer_maps_and_survive_a_checkpoint(tmp_path):
    from tsm_apps.checkpoint.reading import load_checkpoint, save_checkpoint

    x = torch.randn(1, 4, 3, 112, 112, generator=torch.Generator().manual_seed(0))
    sizes = {}
    for os_ in (32, 16, 8):
        m = _tiny("offline", output_stride=os_)
        with torch.no_grad():
            sizes[os_] = tuple(m.features(x).shape[-2:])
            logits = m(x)
        if os_ == 16:
            again = load_checkpoint(save_checkpoint(tmp_path / "os16.pth", m)).eval()
            with torch.no_grad():
                assert torch.equal(again(x), logits)
    # 112 px: 4x4 at stride 32, 7x7 at 16, 14x14 at 8; every model has the same parameters
    assert sizes == {32: (4, 4), 16: (7, 7), 8: (14, 14)}
    assert (
        _tiny("offline", output_stride=16).state_dict().keys()
        == _tiny("offline").state_dict().keys()
    )
    with pytest.raises(ValueError, match="output_stride must be one of"):
        _tiny("offline", output_stride=4)
    with pytest.raises(ValueError, match="ResNets only"):
        _tiny("offline", arch="mobilenetv2", output_stride=16)


def test_train_config_output_stride_flag():
    from tsm_apps.train.cli import build_parser, config_from_args
    from tsm_apps.train.config import TrainConfig, load_config

    cfg = config_from_args(build_parser().parse_args(["--data", "d", "--output-stride", "16"]))
    assert cfg.model.output_stride == 16 and TrainConfig().model.output_stride == 32
    with pytest.raises(ValueError, match="output_stride must be 32, 16 or 8, got 12"):
        load_config(output_stride=12)


def test_online_cache_bytes_are_the_retained_storage():
    m = _tiny("online", arch="resnet50")
    with OnlineRecognizer(m) as online:
        online.step(torch.randn(2, 3, 64, 64))
        bufs = online.state.buffers
        # fold = C_in // 8 channels of each shifted block's input, 2 streams, fp32 (hand count:
        # layer1 (1+4+4)*16*16, layer2 4*16*16 + 3*8*8*8, layer3 8*8*8 + 5*16*4*4,
        # layer4 16*4*4 + 2*32*2*2 = 7168 values per stream)
        assert online.cache_bytes == 2 * 7168 * 4
        assert sum(b.untyped_storage().nbytes() for b in bufs) == 2 * 7168 * 4
        assert len({b.untyped_storage().data_ptr() for b in bufs}) == len(bufs)


def test_online_cache_mobilenetv2_owns_storage():
    m = _tiny("online", arch="mobilenetv2")
    with OnlineRecognizer(m) as online:
        online.step(torch.randn(1, 3, 32, 32))
        bufs = online.state.buffers
        assert all(b.untyped_storage().nbytes() == b.numel() * 4 for b in bufs)
        assert online.cache_bytes == sum(b.shape[1] * b.shape[2] * b.shape[3] * 4 for b in bufs)


@pytest.mark.parametrize("arch", ["resnet50", "mobilenetv2"])
def test_channels_last_by_default_and_same_values_in_nchw(arch):
    from tsm_apps.models.trunk import set_memory_format

    m = _tiny("offline", arch=arch)
    x = torch.randn(1, 4, 3, 32, 32)
    with torch.no_grad():
        f = m.features(x)
        assert f[0].is_contiguous(memory_format=torch.channels_last)
        set_memory_format(m.backbone, torch.contiguous_format)
        g = m.features(x)
    assert g.is_contiguous()
    # float rounding of other conv kernels: within a few ulps of the largest feature
    assert (f - g).abs().max() <= 4e-6 * f.abs().max()
