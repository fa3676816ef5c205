import pytest
import torch

from dissect.cam import (
    class_activation_maps,
    class_map,
    compute_cam,
    resolve_classes,
    upsample_maps,
)
from dissect_fixtures import NUM_CLASSES, SEGMENTS, SIZE, tiny_model


def test_cam_mean_plus_bias_is_the_clip_logit(model, clips):
    with torch.no_grad():
        feats = model.features(clips)
        maps = class_activation_maps(feats, model.fc)
        logits = model(clips)
    assert maps.shape == (2, NUM_CLASSES, SEGMENTS, 2, 2)
    recon = maps.mean(dim=(2, 3, 4)) + model.fc.bias
    torch.testing.assert_close(recon, logits, rtol=0, atol=1e-5)


def test_identity_holds_with_temporal_pool():
    m = tiny_model(temporal_pool=True)
    x = torch.randn(1, SEGMENTS, 3, SIZE, SIZE)
    res = compute_cam(m, x, class_idx=3, upsample=False)
    assert res.lowres.shape == (1, SEGMENTS // 2, 2, 2)
    torch.testing.assert_close(
        res.lowres.mean(dim=(1, 2, 3)) + m.fc.bias[3], res.logits[:, 3], rtol=0, atol=1e-5
    )


def test_class_map_is_the_slice_of_all_class_maps(model, clips):
    with torch.no_grad():
        feats = model.features(clips)
        full = class_activation_maps(feats, model.fc)
        one = class_map(feats, model.fc, torch.tensor([4, 1]))
    torch.testing.assert_close(one[0], full[0, 4])
    torch.testing.assert_close(one[1], full[1, 1])


def test_predicted_class_and_upsampled_shape(model, clips):
    res = compute_cam(model, clips)
    assert res.maps.shape == (2, SEGMENTS, SIZE, SIZE)
    assert torch.equal(res.classes, res.logits.argmax(1))


def test_upsampling_bilinear_shapes_and_temporal_repeat():
    low = torch.arange(8.0).reshape(1, 2, 2, 2)
    up = upsample_maps(low, (6, 4), num_frames=4)
    assert up.shape == (1, 4, 6, 4)
    torch.testing.assert_close(up[0, 0], up[0, 1])
    torch.testing.assert_close(up[0, 2], up[0, 3])
    # bilinear with align_corners=False keeps the mean of a 2x upsampled map
    torch.testing.assert_close(
        upsample_maps(low, (4, 4))[0].mean(dim=(1, 2)), low[0].mean(dim=(1, 2))
    )
    with pytest.raises(ValueError, match="cannot spread 2 map steps over 3"):
        upsample_maps(low, (4, 4), num_frames=3)


def test_class_index_out_of_range_is_a_clear_error(model, clips):
    with pytest.raises(ValueError, match=r"class index 5 out of range.*5 classes"):
        compute_cam(model, clips, class_idx=5)
    with pytest.raises(ValueError, match="out of range"):
        resolve_classes(torch.zeros(2, 3), [0, -1])


def test_training_mode_and_bad_layout_are_rejected(model, clips):
    with pytest.raises(ValueError, match=r"\(N, T, 3, H, W\)"):
        compute_cam(model, clips[0])
    model.train()
    with pytest.raises(ValueError, match="eval mode"):
        compute_cam(model, clips)
