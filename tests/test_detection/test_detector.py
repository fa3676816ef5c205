"""ClipRFCN: clip training losses, online stream predict == whole-clip predict, stream resets."""

import copy

import pytest
import torch
from mmdet.registry import MODELS
from mmdet.structures import DetDataSample

from model_fixtures import H, W, build, frames, samples, tiny_cfg


def test_loss_on_clips_and_backward_reaches_every_trainable_part():
    model = build().train()
    data = samples("a") + samples("b")  # 2 clips of T=2
    losses = model.loss(frames(4), data)
    assert {"loss_rpn_cls", "loss_rpn_bbox", "loss_cls", "loss_bbox", "acc"} <= set(losses)
    total, _ = model.parse_losses(losses)
    assert torch.isfinite(total)
    total.backward()
    for part in (
        model.backbone.trunk.layer4,
        model.rpn_head,
        model.roi_head.bbox_head.cls_conv,
        model.roi_head.bbox_head.reg_conv,
    ):
        assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in part.parameters())


def test_training_batch_must_be_whole_clips_of_one_video():
    model = build().train()
    with pytest.raises(ValueError, match="N clips of T=2"):
        model.loss(frames(3), samples("a", (0, 1, 2)))
    with pytest.raises(ValueError, match="mixes videos"):
        model.loss(frames(2), samples("a", (0,)) + samples("b", (1,)))


def test_loss_on_the_key_frame_of_each_clip_only():
    model = build(t=4).train()
    data = samples("a", (0, 1, 2, 3), key=1) + samples("b", (5, 6, 7, 8))  # keys: 1, 7
    x = frames(8)
    assert model.loss_indices(data) == [1, 7]
    torch.manual_seed(5)
    got = model.loss(x, data)
    torch.manual_seed(5)
    feats = model.extract_feat(x)  # the whole clips: the shift reaches the key frames
    want = model.head_losses(tuple(f[[1, 7]] for f in feats), [data[1], data[7]])
    g, w = model.parse_losses(got)[1], model.parse_losses(want)[1]
    assert g.keys() == w.keys() and all(abs(g[k] - w[k]) < 1e-5 for k in g), (g, w)
    model.loss_frames = "clip"
    assert model.loss_indices(data) == list(range(8))


def test_key_loss_needs_one_marked_key_frame_per_clip():
    model = build(t=2).train()
    data = samples("a", (0, 1))
    data[0].set_metainfo(dict(clip_key=True))
    with pytest.raises(ValueError, match="clip 0 of the batch has 2 frames with clip_key"):
        model.loss(frames(2), data)
    bare = samples("a", (0, 1))
    del bare[0].clip_key
    with pytest.raises(ValueError, match="frame 0 of the batch has no metainfo 'clip_key'"):
        model.loss(frames(2), bare)
    with pytest.raises(ValueError, match="loss_frames must be one of"):
        build(loss_frames="all")


def test_unannotated_frames_get_no_loss():
    model = build(loss_frames="clip").train()
    data = samples("a", (0, 1, 2, 3))
    data[1].set_metainfo(dict(annotated=False))
    x = frames(4)
    torch.manual_seed(5)
    got = model.loss(x, data)
    torch.manual_seed(5)
    feats = model.extract_feat(x)
    keep = torch.tensor([0, 2, 3])
    want = model.head_losses(tuple(f[keep] for f in feats), [data[i] for i in (0, 2, 3)])
    g, w = model.parse_losses(got)[1], model.parse_losses(want)[1]
    assert g.keys() == w.keys() and all(abs(g[k] - w[k]) < 1e-5 for k in g), (g, w)


def dets(results):
    return [
        (r.pred_instances.bboxes, r.pred_instances.scores, r.pred_instances.labels) for r in results
    ]


def test_stream_features_equal_whole_clip_online_features():
    model = build(t=4).eval()
    x = frames(4)
    with torch.no_grad():
        whole = model.extract_feat(x)
        state = model.backbone.new_state()
        steps = [model.step_feat(x[i : i + 1], state) for i in range(4)]
    for lvl in range(2):
        diff = (torch.cat([s[lvl] for s in steps]) - whole[lvl]).abs().max().item()
        assert diff <= 1e-5


def test_stream_predict_across_batches_equals_clip_predict():
    model = build(t=4).eval()
    x = frames(4)
    with torch.no_grad():
        stream = model.predict(x[:2], samples("a", (0, 1))) + model.predict(
            x[2:], samples("a", (2, 3))
        )
        model.test_mode = "clip"
        clip = model.predict(x, samples("a", (0, 1, 2, 3)))
    assert all(len(s[0]) > 0 for s in dets(stream))
    for (b1, s1, l1), (b2, s2, l2) in zip(dets(stream), dets(clip)):
        assert torch.equal(l1, l2)
        assert torch.allclose(b1, b2, atol=1e-3) and torch.allclose(s1, s2, atol=1e-5)


def test_stream_resets_at_a_new_video_and_on_restart():
    model = build(t=4).eval()
    x = frames(3)
    with torch.no_grad():
        fresh = dets(model.predict(x[2:3], samples("b", (0,))))
        model.predict(x[:2], samples("a", (0, 1)))
        after_a = dets(model.predict(x[2:3], samples("b", (0,))))
        model.predict(x[:2], samples("b", (0, 1)))
        restart = dets(model.predict(x[2:3], samples("b", (0,))))  # frame_id went back
        cont = dets(model.predict(x[2:3], samples("b", (1,))))  # continues b's stream
    for other in (after_a, restart):
        assert torch.equal(fresh[0][1], other[0][1])
    assert not torch.equal(fresh[0][1], cont[0][1])


def test_stream_needs_video_metainfo_and_causal_backbone():
    model = build().eval()
    data = samples("a", (0,))
    data[0] = DetDataSample(
        metainfo=dict(
            img_shape=(H, W), ori_shape=(H, W), scale_factor=(1.0, 1.0), batch_input_shape=(H, W)
        )
    )
    with pytest.raises(ValueError, match=r"metainfo \['video', 'frame_id'\]"):
        model.predict(frames(1), data)
    with pytest.raises(ValueError, match="test_mode='clip'"):
        build(shift="offline")
    assert build(shift="offline", test_mode="clip") is not None


def test_stream_crops_batch_padding_to_the_frame_extent():
    model = build(t=4).eval()
    x = frames(1)
    padded = torch.zeros(1, 3, H + 32, W + 16)
    padded[..., :H, :W] = x
    with torch.no_grad():
        plain = dets(model.predict(x, samples("a", (0,))))
        model.reset_stream()
        data = samples("a", (0,))
        data[0].set_metainfo(dict(batch_input_shape=(H + 32, W + 16)))
        cropped = dets(model.predict(padded, data))
    assert torch.equal(plain[0][1], cropped[0][1])


def test_train_mode_forgets_the_stream():
    model = build().eval()
    with torch.no_grad():
        model.predict(frames(1), samples("a", (0,)))
    assert model.test_stream.state is not None and model.test_stream.cache_bytes > 0
    model.train()
    assert model.test_stream.state is None and model.test_stream.cache_bytes == 0


def test_tensor_mode_forward():
    model = build().eval()
    with torch.no_grad():
        (out,) = model(frames(2), samples("a"), mode="tensor")
    cls, box = out
    assert cls.shape[1] == 4 and box.shape[1] == 4 and cls.shape[0] == box.shape[0] > 0


def test_mmdet_ohem_sampler_also_works_with_the_head():
    cfg = tiny_cfg()
    cfg["train_cfg"]["rcnn"]["sampler"] = dict(
        type="OHEMSampler", num=16, pos_fraction=0.25, neg_pos_ub=-1, add_gt_as_proposals=True
    )
    torch.manual_seed(0)
    model = MODELS.build(cfg).train()
    losses = model.loss(frames(2), samples("a"))
    assert torch.isfinite(losses["loss_cls"]) and torch.isfinite(losses["loss_bbox"])
    copy.deepcopy(model)  # samplers hold the head as context: the model stays copyable


def test_paper_config_r101_builds_and_runs_one_forward_backward():
    from pathlib import Path

    from mmengine.config import Config
    from mmengine.registry import init_default_scope

    import detection

    init_default_scope("mmdet")
    cfg = Config.fromfile(str(Path(detection.__file__).parent / "configs/_base_/rfcn_r101.py"))
    cfg.model.backbone.num_segments = 2
    cfg.model.train_cfg.rpn.allowed_border = -1  # 128-pixel anchors do not fit inside 128x128
    torch.manual_seed(0)
    model = MODELS.build(cfg.model).train()
    trunk = model.backbone.trunk
    assert len(trunk.layer3) == 23 and trunk.layer4[0].conv2.dilation == (2, 2)
    head = model.roi_head.bbox_head
    assert (head.reduce.in_channels, head.reduce.out_channels) == (2048, 1024)
    assert head.cls_conv.out_channels == 49 * 31 and head.reg_conv.out_channels == 49 * 8
    assert model.roi_head.bbox_sampler.num == 128
    x = torch.randn(2, 3, 128, 128, generator=torch.Generator().manual_seed(0))
    data = samples("a", (0, 1), boxes=((10, 20, 90, 100), (40, 30, 120, 110)))
    for s in data:
        s.set_metainfo(
            dict(
                img_shape=(128, 128),
                ori_shape=(128, 128),
                pad_shape=(128, 128),
                batch_input_shape=(128, 128),
            )
        )
    losses = model.loss(x, data)
    total, _ = model.parse_losses(losses)
    total.backward()
    assert torch.isfinite(total)
    assert trunk.layer4[2].conv3.weight.grad.abs().sum() > 0
    assert trunk.layer1[0].conv1.net.weight.grad is None  # frozen_stages=1


def test_stream_resets_at_a_frame_id_gap_or_refuses_it():
    model = build(t=4).eval()
    x = frames(3)
    with torch.no_grad():
        fresh = dets(model.predict(x[2:3], samples("b", (0,))))
        model.predict(x[:2], samples("a", (0, 1)))
        gap = dets(model.predict(x[2:3], samples("a", (3,))))  # frame 2 never came
        model.predict(x[:2], samples("a", (0, 1)))
        cont = dets(model.predict(x[2:3], samples("a", (2,))))  # the next frame: kept
    assert torch.equal(fresh[0][1], gap[0][1])
    assert not torch.equal(fresh[0][1], cont[0][1])
    strict = MODELS.build(dict(tiny_cfg(t=4), stream_gap="raise")).eval()
    with torch.no_grad():
        strict.predict(x[:2], samples("a", (0, 1)))
        with pytest.raises(ValueError, match="jumps from frame 1 to 3"):
            strict.predict(x[2:3], samples("a", (3,)))
    with pytest.raises(ValueError, match="stream_gap must be one of"):
        MODELS.build(dict(tiny_cfg(), stream_gap="skip"))


def test_clip_mode_needs_consecutive_frames_of_one_video():
    model = build(t=4, test_mode="clip").eval()
    x = frames(3)
    with torch.no_grad():
        assert len(model.predict(x, samples("a", (4, 5, 6)))) == 3
        with pytest.raises(
            ValueError,
            match=r"frame ids \[0, 2, 3\] of video a are not "
            "consecutive",
        ):
            model.predict(x, samples("a", (0, 2, 3)))
        mixed = samples("a", (0, 1)) + samples("b", (2,))
        with pytest.raises(ValueError, match=r"mixes videos \['a', 'b'\]"):
            model.predict(x, mixed)
    assert model.backbone.num_segments == 4  # restored after each clip
