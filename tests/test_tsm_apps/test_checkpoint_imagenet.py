"""ImageNet weights (torchvision state dicts, plain or wrapped, and mmpretrain checkpoints)
start a TSM/TSN recognizer: the layout is recognised and named, plain convs land on the shifted
convs' keys, the 1000-class fc is skipped."""

from __future__ import annotations

import logging

import pytest
import torch
import torchvision

from tsm_apps import build_recognizer


def imagenet_layouts(tmp_path) -> tuple:
    """A torchvision ResNet-18 state dict saved plain, under ``state_dict``, under ``model``, and
    as mmpretrain (``backbone.*``, ``head.fc.*``)."""
    torch.manual_seed(0)
    sd = torchvision.models.resnet18(weights=None).state_dict()
    mm = {("head." + k if k.startswith("fc.") else "backbone." + k): v for k, v in sd.items()}
    files = {
        "plain": sd,
        "state_dict": {"state_dict": sd},
        "model": {"model": sd},
        "mmpretrain": {"state_dict": mm, "meta": {"epoch": 100}},
    }
    for name, obj in files.items():
        torch.save(obj, tmp_path / f"{name}.pth")
    return sd, [tmp_path / f"{n}.pth" for n in files]


def test_torchvision_and_mmpretrain_imagenet_weights_start_a_tsm_recognizer(tmp_path, caplog):
    from tsm_apps.checkpoint.layouts import detect_layout, to_our_keys
    from tsm_apps.train.model import load_pretrained

    sd, paths = imagenet_layouts(tmp_path)
    assert detect_layout(sd) == "torchvision"
    assert detect_layout(to_our_keys(sd)) == "tsm_apps"
    for path, layout in zip(paths, ("torchvision",) * 3 + ("mmpretrain",)):
        model = build_recognizer("resnet18", 7, num_segments=2, shift="offline")
        fc = model.fc.weight.clone()
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="tsm_apps"):
            load_pretrained(model, str(path))  # logs the layout line
        own = model.state_dict()
        # plain convs land on the shifted convs' keys; every ImageNet tensor but fc is loaded
        assert torch.equal(own["backbone.layer1.0.conv1.net.weight"], sd["layer1.0.conv1.weight"])
        assert torch.equal(own["backbone.layer4.1.bn2.running_var"], sd["layer4.1.bn2.running_var"])
        assert torch.equal(
            own["backbone.layer2.0.downsample.0.weight"], sd["layer2.0.downsample.0.weight"]
        )
        assert torch.equal(model.fc.weight, fc)  # 1000-class fc not loaded
        assert (
            f"{layout} layout, {len(sd) - 2} tensors loaded, 0 missing, 2 skipped (fc.)"
            in caplog.text
        )
    tsn = build_recognizer("resnet18", 7, num_segments=2, shift=None)
    load_pretrained(tsn, str(paths[0]))
    assert torch.equal(
        tsn.state_dict()["backbone.layer1.0.conv1.weight"], sd["layer1.0.conv1.weight"]
    )


def test_imagenet_weights_of_another_depth_name_the_layout(tmp_path):
    sd, paths = imagenet_layouts(tmp_path)
    from tsm_apps.train.model import load_pretrained

    model = build_recognizer("resnet50", 7, num_segments=2)
    with pytest.raises(
        ValueError,
        match=r"torchvision layout\) vs the requested model "
        r"\(arch=resnet50",
    ):
        load_pretrained(model, str(paths[0]))
