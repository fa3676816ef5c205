"""open_checkpoint ``into`` a recognizer that exists (``tsm train --pretrained``): every backbone
tensor comes from the file, the fc only when the classes match, the model keeps its mode and
device, and the names are the file's when they fit the model's classes."""

import torch

from tsm_apps import build_recognizer
from tsm_apps.checkpoint.opening import open_checkpoint
from tsm_apps.checkpoint.reading import save_checkpoint


def _tiny(num_classes: int, seed: int):
    torch.manual_seed(seed)
    return build_recognizer("resnet18", num_classes=num_classes, num_segments=4, width=0.125)


def test_opening_into_a_model_loads_the_backbone_and_the_fc_only_for_the_same_classes(tmp_path):
    src = _tiny(2, seed=0)
    path = save_checkpoint(tmp_path / "best.pth", src, meta={"classes": ["push", "pull"]})
    theirs = src.state_dict()

    other = _tiny(3, seed=1).train()
    fresh_fc = other.fc.weight.clone()
    assert not torch.equal(
        other.state_dict()["backbone.conv1.weight"], theirs["backbone.conv1.weight"]
    )
    ck = open_checkpoint(path, into=other)
    assert ck.model is other and other.training and not ck.fc_loaded
    assert ck.layout == "tsm_apps" and ck.raw["meta"]["classes"] == ["push", "pull"]
    ours = other.state_dict()
    backbone = [k for k in theirs if k.startswith("backbone.")]
    assert len(backbone) > 50
    assert all(torch.equal(ours[k], theirs[k]) for k in backbone)
    assert torch.equal(other.fc.weight, fresh_fc)  # 3 classes: the fc stays fresh
    assert ck.names == ["class 0", "class 1", "class 2"]  # the file's 2 names do not fit

    same = _tiny(2, seed=2)
    ck = open_checkpoint(path, into=same)
    assert ck.fc_loaded and ck.names == ["push", "pull"]
    assert torch.equal(same.fc.weight, src.fc.weight) and torch.equal(same.fc.bias, src.fc.bias)
    assert same.fc.weight.device.type == "cpu"
