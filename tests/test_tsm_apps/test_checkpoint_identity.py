"""What a checkpoint file is: the official file name read once, the class names, the test
segments and the test protocol that go with it -- and ``tsm test --twice-sample``, checked
against the official formulas (``ops/dataset.py`` ``_get_test_indices``, ``twice_sample``)."""

import json

import numpy as np
import pytest
import torch

from tests.test_tsm_apps.toy_videos import motion_videos, write_frame_folders
from tsm_apps import build_recognizer
from tsm_apps.checkpoint.identity import (
    OfficialName,
    bundled_list_for,
    class_names,
    legacy_protocol,
    official_protocol,
    official_test_segments,
    protocol_for,
)
from tsm_apps.data.pipeline import clip_indices
from tsm_apps.data.protocol import TestProtocol, official_scale_size
from tsm_apps.evaluation import open_checkpoint
from tsm_apps.evaluation.cli import main as tsm_test

TSN = "TSM_kinetics_RGB_resnet50_avg_segment5_e50.pth"  # the official TSN baseline


def official_centres(num_frames: int, t: int, new_length: int = 1) -> list:
    """Official ``_get_test_indices`` (uniform branch), 0-based."""
    tick = (num_frames - new_length + 1) / float(t)
    return [int(tick / 2.0 + tick * x) for x in range(t)]


def official_twice(num_frames: int, t: int, new_length: int = 1) -> list:
    """Official ``twice_sample``: the centres, then ``int(tick * x)``, 0-based."""
    tick = (num_frames - new_length + 1) / float(t)
    return official_centres(num_frames, t, new_length) + [int(tick * x) for x in range(t)]


def official_dense(num_frames: int, t: int, clips: int = 10) -> list:
    """Official ``dense_sample`` test indices (``_get_test_indices``), 0-based, per clip."""
    sample_pos = max(1, 1 + num_frames - 64)
    t_stride = 64 // t
    starts = np.linspace(0, sample_pos - 1, num=clips, dtype=int)
    return [[(idx * t_stride + int(s)) % num_frames for idx in range(t)] for s in starts]


def save_official(model, path) -> None:
    """``model``'s weights in the official repository's DataParallel layout."""
    sd = {
        ("module.new_fc." + k[3:])
        if k.startswith("fc.")
        else "module.base_model." + k[len("backbone.") :]: v
        for k, v in model.state_dict().items()
    }
    torch.save({"state_dict": sd, "epoch": 50}, path)


@pytest.mark.parametrize(
    "name,key",
    [
        ("TSM_kinetics_RGB_resnet50_shift8_blockres_avg_segment8_e50.pth", "kinetics400"),
        ("TSM_something_RGB_resnet50_shift8_blockres_avg_segment8_e45.pth", "something_v1"),
        ("TSM_somethingv2_RGB_resnet50_shift8_blockres_avg_segment8_e45.pth", "something_v2"),
        (
            "tsm_imagenet-pretrained-r50_8xb16-1x1x8-50e_kinetics400-rgb_20220831-64d69186.pth",
            "kinetics400",
        ),
        (
            "tsm_imagenet-pretrained-r50_8xb16-1x1x8-50e_sthv2-rgb_20230317-be0fc26e.pth",
            "something_v2",
        ),
        ("tsm_r50_sthv1-rgb.pth", "something_v1_mmaction2"),
        ("best.pth", None),
        ("TSM_ucf101_RGB_resnet50_segment8.pth", None),
    ],
)
def test_bundled_list_chosen_from_the_file_name(name, key):
    assert bundled_list_for(name) == key


def test_class_names_precedence(tmp_path):
    f = tmp_path / "c.txt"
    f.write_text("a\nb\n")
    assert class_names(2, classes_file=f) == ["a", "b"]
    with pytest.raises(ValueError, match=r"c.txt: 2 class names but the model has 3 classes"):
        class_names(3, classes_file=f)
    ours = {"format": "tsm_apps.recognizer/1", "meta": {"classes": ["x", "y"]}}
    assert class_names(2, checkpoint=ours) == ["x", "y"]
    assert class_names(3, checkpoint=ours) == ["class 0", "class 1", "class 2"]
    official = tmp_path / "TSM_kinetics_RGB_resnet50_shift8_blockres_avg_segment8_e50.pth"
    names = class_names(400, checkpoint={}, file_name=official.name)
    assert names[0] == "abseiling" and names[-1] == "zumba"
    assert class_names(10, file_name=official.name)[9] == "class 9"  # count does not match
    assert class_names(2, checkpoint=ours, classes_file=f) == ["a", "b"]  # the file wins
    assert class_names(1) == ["class 0"]


def test_official_names_pick_their_protocol():
    p = official_protocol("TSM_kinetics_RGB_resnet50_shift8_blockres_avg_segment8_e50.pth")
    assert (
        p.sampling,
        p.clips,
        p.scale_size,
        p.crop_size,
        p.crops,
        p.style,
        p.resize,
        p.fusion,
    ) == ("tsn", 1, 256, 224, 1, "official", "pil", "logits")
    d = official_protocol(
        "TSM_kinetics_RGB_mobilenetv2_shift8_blockres_avg_segment8_e100_dense.pth"
    )
    assert (d.sampling, d.clips, d.scale_size, d.crop_size, d.crops) == ("dense", 10, 256, 256, 3)
    assert d.describe().startswith(
        "official protocol (test_models.py --dense_sample --full_res "
        "--test_crops 3): 10 dense clips x 3 crops of 256 from "
        "shorter side 256 (pil resize), mean logits"
    )


def test_our_checkpoints_carry_theirs():
    rec = TestProtocol(scale_size=128, crop_size=112, crops=3)
    assert protocol_for("tsm_apps", {"meta": {"test_protocol": rec.to_dict()}}) == rec
    old = protocol_for("tsm_apps", {"meta": {"train_config": {"size": 64}}})
    assert old == legacy_protocol({"size": 64})
    assert (old.scale_size, old.crop_size, old.resize) == (64, 64, "torch")
    assert protocol_for("official", {}, "x.pth").origin == "official"
    with pytest.raises(ValueError, match="unknown keys"):
        TestProtocol.from_dict({"crop": 3})
    with pytest.raises(ValueError, match="crops must be one of"):
        TestProtocol(crops=4)


@pytest.mark.parametrize(
    "name,segments",
    [
        (TSN, 8),  # scripts/test_tsm_kinetics_rgb_8f.sh: --test_segments=8; README TSN rows "8 *"
        ("TSM_kinetics_RGB_resnet50_shift8_blockres_avg_segment8_e50.pth", 8),
        ("TSM_kinetics_RGB_resnet50_shift8_blockres_avg_segment16_e50.pth", 16),
        ("TSM_something_RGB_resnet50_shift8_blockres_avg_segment8_e45.pth", 8),
        ("TSM_kinetics_RGB_resnet18_avg_segment5_e50.pth", 5),  # not a published checkpoint
        ("best.pth", None),
    ],
)
def test_test_segments_are_those_of_the_official_scripts(name, segments):
    assert official_test_segments(name) == segments
    parsed = OfficialName.parse(name)
    if parsed is not None:  # the name's own T stays what it was trained with
        assert parsed.num_segments == int(name.split("segment")[1].split("_")[0])


def test_the_official_tsn_is_tested_at_8_segments(tmp_path):
    torch.manual_seed(0)
    model = build_recognizer("resnet50", num_classes=400, num_segments=5, shift=None, width=0.125)
    save_official(model, tmp_path / TSN)
    videos, labels = motion_videos(1, frames=100, size=32)
    write_frame_folders(tmp_path, videos, labels, val_every=1)
    ck = open_checkpoint(tmp_path / TSN, device="cpu")
    assert ck.num_segments == 8 and ck.model.config.shift is None
    assert ck.names[0] == "abseiling"  # the bundled Kinetics list, from the name
    out = tmp_path / "res.json"
    assert (
        tsm_test(
            [
                str(tmp_path / TSN),
                "--data",
                str(tmp_path / "val.txt"),
                "--out",
                str(out),
                "--no-progress",
                "--size",
                "32",
                "--scale-size",
                "36",
            ]
        )
        == 0
    )
    assert json.loads(out.read_text())["predictions"][0]["frames"] == [official_centres(100, 8)]
    assert open_checkpoint(tmp_path / TSN, device="cpu", segments=5).num_segments == 5
    # the README's 70.6% command: --test_segments=8 --test_crops=3 --dense_sample --full_res
    dense = tmp_path / "dense.json"
    assert (
        tsm_test(
            [
                str(tmp_path / TSN),
                "--data",
                str(tmp_path / "val.txt"),
                "--dense-sample",
                "--crops",
                "3",
                "--size",
                "32",
                "--scale-size",
                "32",
                "--out",
                str(dense),
                "--no-progress",
            ]
        )
        == 0
    )
    res = json.loads(dense.read_text())
    assert (res["protocol"]["sampling"], res["protocol"]["clips"], res["protocol"]["crops"]) == (
        "dense",
        10,
        3,
    )
    # 100 frames: starts linspace(0, 36, 10) -> 0, 4, 8, ..., 36; stride 64 // 8 = 8
    assert official_dense(100, 8)[1] == [4, 12, 20, 28, 36, 44, 52, 60]
    assert res["predictions"][0]["frames"] == official_dense(100, 8)


@pytest.mark.parametrize("num_frames,t", [(20, 8), (37, 8), (5, 8), (120, 16), (9, 3)])
def test_twice_sampling_is_the_official_formula(num_frames, t):
    twice = TestProtocol(sampling="twice", clips=2)
    assert clip_indices(twice, num_frames, t).reshape(-1).tolist() == official_twice(num_frames, t)
    assert clip_indices(twice, num_frames, t, new_length=5).reshape(-1).tolist() == official_twice(
        num_frames, t, 5
    )


def test_tsm_test_twice_sample(tmp_path):
    torch.manual_seed(0)
    model = build_recognizer("resnet18", num_classes=2, num_segments=4, width=0.125)
    from tsm_apps.checkpoint.reading import save_checkpoint

    save_checkpoint(tmp_path / "best.pth", model, meta={"train_config": {"size": 32}})
    videos, labels = motion_videos(2, frames=13, size=32)
    write_frame_folders(tmp_path, videos, labels, val_every=1)
    out = tmp_path / "res.json"
    assert (
        tsm_test(
            [
                str(tmp_path / "best.pth"),
                "--data",
                str(tmp_path / "val.txt"),
                "--twice-sample",
                "--out",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    res = json.loads(out.read_text())
    assert (res["protocol"]["sampling"], res["protocol"]["clips"]) == ("twice", 2)
    # 13 frames, 4 segments: tick 3.25 -> centres [1, 4, 8, 11], starts [0, 3, 6, 9]
    assert official_twice(13, 4) == [1, 4, 8, 11, 0, 3, 6, 9]
    assert res["predictions"][0]["frames"] == [[1, 4, 8, 11], [0, 3, 6, 9]]
    with pytest.raises(ValueError, match="--twice-sample gives 2 clips, got --clips 3"):
        tsm_test(
            [
                str(tmp_path / "best.pth"),
                "--data",
                str(tmp_path / "val.txt"),
                "--twice-sample",
                "--clips",
                "3",
            ]
        )


def test_the_official_scale():
    assert official_scale_size(224) == 256 and official_scale_size(112) == 128
    assert official_protocol(TSN, crop_size=32).scale_size == 36  # 32 * 256 // 224


@pytest.fixture
def loads(monkeypatch):
    """The files ``torch.load`` reads, in order (every safe read goes through it)."""
    seen = []
    real = torch.load

    def counting(f, *a, **k):
        seen.append(str(f))
        return real(f, *a, **k)

    monkeypatch.setattr(torch, "load", counting)
    return seen


def test_tsm_test_and_pretrained_read_a_checkpoint_once(tmp_path, loads):
    from tsm_apps.checkpoint.reading import save_checkpoint
    from tsm_apps.train.model import load_pretrained

    torch.manual_seed(0)
    model = build_recognizer("resnet18", num_classes=2, num_segments=4, width=0.125)
    ck_path = tmp_path / "best.pth"
    save_checkpoint(ck_path, model, meta={"train_config": {"size": 32}})
    open_checkpoint(ck_path, device="cpu")
    assert loads == [str(ck_path)]
    loads.clear()
    fresh = build_recognizer("resnet18", num_classes=2, num_segments=4, width=0.125)
    assert load_pretrained(fresh, str(ck_path)) is True
    assert loads == [str(ck_path)]
