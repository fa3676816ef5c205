"""Class names: class files, names stored in our checkpoints, bundled lists picked by file name."""
import json

import pytest
import torch

from tsm_apps.data.classes import (bundled_classes, bundled_list_for, class_names,
                                   read_class_file)


def test_bundled_lists_have_the_published_sizes_and_known_indices():
    k400 = bundled_classes("kinetics400")
    assert len(k400) == len(set(k400)) == 400
    # mmaction2 label_map_k400.txt: 0 abseiling, 5 archery, 6 arm wrestling, 399 zumba
    assert (k400[0], k400[5], k400[6], k400[399]) == ("abseiling", "archery", "arm wrestling",
                                                       "zumba")
    assert k400 == sorted(k400, key=str.lower)
    v2 = bundled_classes("something_v2")
    assert len(v2) == len(set(v2)) == 174
    # SSv2 labels.json: "Approaching something with your camera": "0", "Holding something": "16"
    assert v2[0] == "Approaching something with your camera" and v2[16] == "Holding something"
    v1, v1_csv = bundled_classes("something_v1"), bundled_classes("something_v1_mmaction2")
    assert v1 == sorted(v1_csv) and v1_csv[0] == "Holding something"  # CSV order vs sorted


@pytest.mark.parametrize("name,key", [
    ("TSM_kinetics_RGB_resnet50_shift8_blockres_avg_segment8_e50.pth", "kinetics400"),
    ("TSM_something_RGB_resnet50_shift8_blockres_avg_segment8_e45.pth", "something_v1"),
    ("TSM_somethingv2_RGB_resnet50_shift8_blockres_avg_segment8_e45.pth", "something_v2"),
    ("tsm_imagenet-pretrained-r50_8xb16-1x1x8-50e_kinetics400-rgb_20220831-64d69186.pth",
     "kinetics400"),
    ("tsm_imagenet-pretrained-r50_8xb16-1x1x8-50e_sthv2-rgb_20230317-be0fc26e.pth",
     "something_v2"),
    ("tsm_r50_sthv1-rgb.pth", "something_v1_mmaction2"),
    ("best.pth", None), ("TSM_ucf101_RGB_resnet50_segment8.pth", None)])
def test_bundled_list_chosen_from_the_file_name(name, key):
    assert bundled_list_for(name) == key


def test_class_file_forms(tmp_path):
    plain = tmp_path / "c.txt"
    plain.write_text("left to right\n\n0 ignored index\n2 right to left\n")
    assert read_class_file(plain) == ["left to right", "ignored index", "right to left"]
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps({"Pushing b": "1", "Pulling a": "0"}))
    assert read_class_file(labels) == ["Pulling a", "Pushing b"]
    (tmp_path / "l.json").write_text('["a", "b"]')
    assert read_class_file(tmp_path / "l.json") == ["a", "b"]
    (tmp_path / "gap.json").write_text('{"a": "0", "b": "2"}')
    with pytest.raises(ValueError, match=r"gap.json: class ids must be 0..1"):
        read_class_file(tmp_path / "gap.json")
    with pytest.raises(FileNotFoundError, match="class file not found"):
        read_class_file(tmp_path / "none.txt")


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
    torch.save({"state_dict": {"module.new_fc.weight": torch.zeros(400, 4)}}, official)
    names = class_names(400, checkpoint=official)
    assert names[0] == "abseiling" and names[-1] == "zumba"
    assert class_names(10, checkpoint=official)[9] == "class 9"   # count does not match
    assert class_names(2, checkpoint=ours, classes_file=f) == ["a", "b"]  # the file wins
    assert class_names(1) == ["class 0"]
