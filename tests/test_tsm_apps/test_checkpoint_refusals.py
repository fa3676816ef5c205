"""What checkpoint loading refuses, in one line naming the file: keys that do not match the model
(missing, unexpected, shape conflicts), weights for another model than the one requested,
objects a safe (``weights_only``) load refuses, a missing file and an unknown layout."""

from __future__ import annotations

import pytest
import torch

from tests.test_tsm_apps.test_checkpoint import RefTSN
from tsm_apps import build_recognizer
from tsm_apps.checkpoint.reading import load_checkpoint, load_weights, read_checkpoint


def test_mismatch_lists_missing_unexpected_and_shapes(tmp_path):
    ref = RefTSN("resnet18", 7, 2)
    sd = ref.state_dict()
    del sd["base_model.layer1.0.bn1.weight"]
    sd["base_model.extra.weight"] = torch.zeros(3)
    sd["base_model.layer2.0.conv2.weight"] = torch.zeros(128, 128, 1, 1)
    path = tmp_path / "TSM_kinetics_RGB_resnet18_shift8_blockres_avg_segment2_e50.pth"
    torch.save({"state_dict": sd}, path)
    with pytest.raises(ValueError) as e:
        load_checkpoint(path)
    msg = str(e.value)
    assert str(path) in msg and "official layout" in msg
    assert (
        msg.endswith(
            " does not match the model: missing keys (1): "
            "backbone.layer1.0.bn1.weight; unexpected keys (1): backbone.extra.weight; "
            "shape conflicts (1): backbone.layer2.0.conv2.weight: checkpoint "
            "(128, 128, 1, 1) vs model (128, 128, 3, 3)"
        )
        and "\n" not in msg
    )


def test_load_weights_names_requested_model(tmp_path):
    torch.save({"state_dict": RefTSN("resnet18", 7, 2).state_dict()}, tmp_path / "c.pth")
    model = build_recognizer("resnet18", num_classes=3, num_segments=2)
    fc = model.fc.weight.clone()
    with pytest.raises(
        ValueError,
        match=r"requested model \(arch=resnet18, num_classes=3\)(.|\n)*"
        r"fc.weight: checkpoint \(7, 512\) vs model \(3, 512\)",
    ):
        load_weights(model, tmp_path / "c.pth")
    load_weights(model, tmp_path / "c.pth", ignore=("fc.",))  # fine-tuning on new classes
    ckpt = torch.load(tmp_path / "c.pth", weights_only=True)["state_dict"]
    assert torch.equal(model.backbone.conv1.weight, ckpt["base_model.conv1.weight"])
    assert torch.equal(model.fc.weight, fc)


class Payload:
    """A custom class: unpickling it would run arbitrary code paths."""


def test_weights_only_refuses_custom_objects(tmp_path):
    model = build_recognizer("resnet18", 2, num_segments=2, width=0.125)
    for zipped in (True, False):
        torch.save(
            {"state_dict": model.state_dict(), "extra": Payload()},
            tmp_path / "evil.pth",
            _use_new_zipfile_serialization=zipped,
        )
        with pytest.raises(ValueError) as e:
            read_checkpoint(tmp_path / "evil.pth")
        msg = str(e.value)
        assert msg.startswith(f"{tmp_path / 'evil.pth'}: contains objects a safe load refuses (")
        tail = msg[len(str(tmp_path / "evil.pth")) :]  # the folder's name holds the test's name
        assert "Payload" in tail and "weights_only" not in tail and "\n" not in msg
    with pytest.raises(FileNotFoundError, match="nope.pth"):
        load_checkpoint(tmp_path / "nope.pth")


def test_unknown_layout_is_named(tmp_path):
    torch.save({"encoder.weight": torch.zeros(2)}, tmp_path / "x.pth")
    with pytest.raises(ValueError, match=r"unrecognised checkpoint layout \(1 keys, e.g. encoder"):
        load_checkpoint(tmp_path / "x.pth")
