import pytest
import torch

from dissect.capture import capture, hook_count


def test_captures_activations_and_gradients(model, clips):
    with capture(model, ["backbone.layer4", "backbone.layer2"], gradients=True) as cap:
        out = model(clips)
        out[:, 1].sum().backward()
    a4 = cap.activations["backbone.layer4"]
    assert a4.shape == (2 * 4, 64, 2, 2)
    assert cap.activations["backbone.layer2"].shape == (8, 16, 8, 8)
    # d logit / d features: fc weight over positions and frames (average pooling)
    expected = model.fc.weight[1][None, :, None, None].expand(8, 64, 2, 2) / (4 * 4)
    torch.testing.assert_close(cap.gradients["backbone.layer4"], expected)
    assert hook_count(model) == 0


def test_no_hook_leaks_on_exception(model, clips):
    before = hook_count(model)
    with pytest.raises(RuntimeError, match="boom"):
        with capture(model, ["backbone.layer1", "backbone.layer4"], gradients=True):
            assert hook_count(model) == 2
            model(clips)
            raise RuntimeError("boom")
    assert hook_count(model) == before == 0
    for m in model.modules():
        assert not m._forward_hooks and not m._backward_hooks and not m._forward_pre_hooks


def test_unknown_layer_names_the_layer(model):
    with pytest.raises(KeyError, match="no module 'backbone.layer9'"):
        with capture(model, ["backbone.layer9"]):
            pass
    assert hook_count(model) == 0


def test_non_tensor_output_is_a_type_error(model, clips):
    class Pair(torch.nn.Module):
        def forward(self, x):
            return x, x

    m = Pair()
    with pytest.raises(TypeError, match="returned tuple"):
        with capture(m, {"pair": m}):
            m(torch.zeros(1))
    assert hook_count(m) == 0
