"""Map methods from outside dissect: a function given as ``method=``, or a name another package
registers under the ``tsm.cam`` entry-point group; what they return is checked."""

from importlib.metadata import EntryPoint

import pytest
import torch

import dissect.methods
from dissect.cam import ClipMaps, compute_cam
from dissect.methods import GROUP, compute_clip_maps


def negated_cam(model, clips, class_idx):
    """A method of another package: minus the exact CAM."""
    cam = compute_cam(model, clips, class_idx)
    return ClipMaps(-cam.maps, -cam.lowres, cam.logits, cam.classes)


def half_size(model, clips, class_idx):
    cam = compute_cam(model, clips, class_idx)
    return ClipMaps(cam.maps[..., ::2, ::2], cam.lowres, cam.logits, cam.classes)


def installed(monkeypatch, **names):
    eps = [EntryPoint(n, f"{__name__}:{f}", GROUP) for n, f in names.items()]
    monkeypatch.setattr(
        dissect.methods, "entry_points", lambda group: eps if group == GROUP else []
    )


def test_a_function_is_a_method(model, clips):
    want = compute_cam(model, clips, [1, 3])
    got = compute_clip_maps(model, clips, negated_cam, class_idx=[1, 3])
    assert torch.equal(got.maps, -want.maps) and torch.equal(got.classes, torch.tensor([1, 3]))


def test_an_installed_method_is_found_by_name(model, clips, monkeypatch):
    installed(monkeypatch, negcam=negated_cam.__name__)
    want = compute_cam(model, clips[:1])
    got = compute_clip_maps(model, clips[0], "negcam")  # one clip (T, 3, H, W)
    assert got.maps.shape == want.maps.shape and torch.equal(got.maps, -want.maps)


def test_an_installed_method_cannot_take_a_built_in_name(model, clips, monkeypatch):
    installed(monkeypatch, cam=negated_cam.__name__)
    assert torch.equal(compute_clip_maps(model, clips, "cam").maps, compute_cam(model, clips).maps)


def test_what_a_method_returns_is_checked(model, clips, monkeypatch):
    with pytest.raises(ValueError, match=r"map method half_size returned maps \(2, 4, 32, 32\)"):
        compute_clip_maps(model, clips, half_size)
    with pytest.raises(TypeError, match="map method <lambda> returned Tensor, expected ClipMaps"):
        compute_clip_maps(model, clips, lambda m, c, k: c)
    installed(monkeypatch)
    with pytest.raises(ValueError, match="unknown method 'negcam'"):
        compute_clip_maps(model, clips, "negcam")
