"""The ImageNet-VID layout's one home: frame names, image/annotation paths and the inclusive
box's pixel edges, against the devkit's layout written out by hand."""

from pathlib import Path

from tsm_apps.data.vid_layout import (
    FRAME_NAME,
    VID_FRAME_TEMPLATE,
    annotation_folder,
    annotation_path,
    annotation_root,
    edge_box,
    image_path,
)


def test_paths_of_the_devkit_layout():
    snippet = "ILSVRC2015_VID_train_0000/ILSVRC2015_train_00000000"
    entry = f"{snippet}/{FRAME_NAME.format(7)}"
    assert image_path("/d", "VID", "train", entry) == Path(
        "/d/Data/VID/train/ILSVRC2015_VID_train_0000/ILSVRC2015_train_00000000/000007.JPEG"
    )
    assert annotation_path("/d", "VID", "train", entry) == Path(
        "/d/Annotations/VID/train/ILSVRC2015_VID_train_0000/ILSVRC2015_train_00000000/000007.xml"
    )
    assert annotation_path("/d", "DET", "train", "ILSVRC2013_train/n01503061/n01503061_5") == Path(
        "/d/Annotations/DET/train/ILSVRC2013_train/n01503061/n01503061_5.xml"
    )
    assert annotation_root("/d", "VID", "val") == Path("/d/Annotations/VID/val")
    assert VID_FRAME_TEMPLATE.format(12) == "000012.JPEG"


def test_annotation_folder_of_a_frame_folder():
    assert annotation_folder("/d/Data/VID/val/ILSVRC2015_val_00000000") == Path(
        "/d/Annotations/VID/val/ILSVRC2015_val_00000000"
    )
    assert annotation_folder("Data/VID/test/ILSVRC2015_test_00000001") == Path(
        "Annotations/VID/test/ILSVRC2015_test_00000001"
    )
    assert annotation_folder("/d/clips/val/x") is None  # not the VID layout
    assert annotation_folder("/d/Data/DET/train/x") is None  # DET has no snippet folders
    assert annotation_folder("VID/val") is None


def test_edge_box_adds_the_devkits_one_pixel():
    # an inclusive box 2..11 x 3..12 is 10 x 10 pixels: its edges end one past the last pixel
    assert edge_box((2, 3, 11, 12)) == [2.0, 3.0, 12.0, 13.0]
    assert edge_box((0, 0, 0, 0)) == [0.0, 0.0, 1.0, 1.0]  # one pixel
    assert all(isinstance(v, float) for v in edge_box((1, 2, 3, 4)))
