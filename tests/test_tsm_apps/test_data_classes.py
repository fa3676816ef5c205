"""Class-name lists: class files and the bundled lists."""

import json

import pytest

from tsm_apps.data.classes import bundled_classes, read_class_file


def test_bundled_lists_have_the_published_sizes_and_known_indices():
    k400 = bundled_classes("kinetics400")
    assert len(k400) == len(set(k400)) == 400
    # mmaction2 label_map_k400.txt: 0 abseiling, 5 archery, 6 arm wrestling, 399 zumba
    assert (k400[0], k400[5], k400[6], k400[399]) == (
        "abseiling",
        "archery",
        "arm wrestling",
        "zumba",
    )
    assert k400 == sorted(k400, key=str.lower)
    v2 = bundled_classes("something_v2")
    assert len(v2) == len(set(v2)) == 174
    # SSv2 labels.json: "Approaching something with your camera": "0", "Holding something": "16"
    assert v2[0] == "Approaching something with your camera" and v2[16] == "Holding something"
    v1, v1_csv = bundled_classes("something_v1"), bundled_classes("something_v1_mmaction2")
    assert v1 == sorted(v1_csv) and v1_csv[0] == "Holding something"  # CSV order vs sorted


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
