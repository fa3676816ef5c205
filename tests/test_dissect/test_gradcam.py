import pytest
import pytorch_grad_cam  # noqa: F401  (required: a missing package fails, never skips)
import torch

from dissect.capture import capture, hook_count  # noqa: E402
from dissect.gradcam import compute_gradcam, frames_to_clip_layout  # noqa: E402
from dissect.methods import compute_clip_maps  # noqa: E402
from dissect_fixtures import SEGMENTS  # noqa: E402

CLASSES = torch.tensor([2, 4])


def _hand_gradcam(model, clips, layer):
    """Activations A (N, T, C, h, w) and gradients G of the target logits, by our own capture."""
    with capture(model, [layer], gradients=True) as cap:
        out = model(clips)
        out[torch.arange(2), CLASSES].sum().backward()
    model.zero_grad(set_to_none=True)
    a = cap.activations[layer].reshape(2, SEGMENTS, *cap.activations[layer].shape[1:])
    return a, cap.gradients[layer].reshape(a.shape)


def test_gradcam_on_the_last_features_is_the_rectified_cam(model, clips):
    """With average pooling + fc, dy/dA = w_k / (T h w) everywhere: per-frame and per-clip
    weights coincide and Grad-CAM = ReLU(CAM) / (T h w)."""
    cam = compute_clip_maps(model, clips, "cam", class_idx=CLASSES).lowres
    for weighting in ("frame", "clip"):
        gc = compute_gradcam(model, clips, "gradcam", weighting, CLASSES, upsample=False).lowres
        torch.testing.assert_close(gc, cam.clamp_min(0) / (SEGMENTS * 2 * 2), rtol=1e-4, atol=1e-6)


def test_per_frame_and_per_clip_weights_are_as_defined(model, clips):
    """On layer3 (shifted blocks follow) the gradients differ between frames."""
    layer = model.backbone.layer3
    a, g = _hand_gradcam(model, clips, "backbone.layer3")
    w_frame = g.mean(dim=(3, 4))  # (N, T, C): one vector per frame
    w_clip = g.mean(dim=(1, 3, 4))  # (N, C): one vector per clip
    want_frame = torch.einsum("ntc,ntchw->nthw", w_frame, a).clamp_min(0)
    want_clip = torch.einsum("nc,ntchw->nthw", w_clip, a).clamp_min(0)
    got_frame = compute_gradcam(model, clips, "gradcam", "frame", CLASSES, layer, upsample=False)
    got_clip = compute_gradcam(model, clips, "gradcam", "clip", CLASSES, layer, upsample=False)
    torch.testing.assert_close(got_frame.lowres, want_frame, rtol=1e-4, atol=1e-6)
    torch.testing.assert_close(got_clip.lowres, want_clip, rtol=1e-4, atol=1e-6)
    assert not torch.allclose(got_frame.lowres, got_clip.lowres)
    assert torch.equal(got_clip.classes, CLASSES)
    assert hook_count(model) == 0
    assert all(p.grad is None for p in model.parameters())


def test_clip_layout_stacks_frames_along_height():
    x = torch.arange(2 * 3 * 1 * 2 * 2, dtype=torch.float32).reshape(6, 1, 2, 2)
    y = frames_to_clip_layout(x, batch=2)
    assert y.shape == (2, 1, 6, 2)
    torch.testing.assert_close(y[1, 0, 2:4], x[4, 0])


@pytest.mark.parametrize("method", ["gradcam++", "xgradcam", "eigencam", "layercam"])
def test_library_methods_give_raw_maps_at_input_size(model, clips, method):
    res = compute_clip_maps(model, clips, method, weighting="frame")
    assert res.maps.shape == (2, SEGMENTS, 64, 64)
    assert float(res.maps.min()) >= 0
    assert hook_count(model) == 0


def test_bad_method_and_class_index(model, clips):
    with pytest.raises(ValueError, match="unknown method 'scorecamx'"):
        compute_clip_maps(model, clips, "scorecamx")
    with pytest.raises(ValueError, match="class index 7 out of range"):
        compute_clip_maps(model, clips, "gradcam", class_idx=7)
    assert hook_count(model) == 0
