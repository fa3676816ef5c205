"""ImageNetVIDDataset on boxes that end on or past the image border, as the ILSVRC XML has them:
FGFA's training clip (``clip_box``), training keeping those frames with clipped boxes, the test
mode keeping them as given, and an inverted box refused as a bad frame."""

import shutil

import pytest

from detection.vid_dataset import clip_box
from vid_fixtures import (
    TRAIN_A,
    TRAIN_B,
    VAL,
    build,
    make_border_vid,
    write_frame,
    write_msra_lists,
)


def test_clip_box_is_fgfas_training_clip():
    # 48x32 image: inclusive xmax <= 47, ymax <= 31, then + 1 for edge coordinates
    assert clip_box((40, 0, 49, 9), 48, 32) == [40.0, 0.0, 48.0, 10.0]
    assert clip_box((16, 25, 25, 32), 48, 32) == [16.0, 25.0, 26.0, 32.0]
    assert clip_box((-3, -1, 5, 5), 48, 32) == [0.0, 0.0, 6.0, 6.0]
    assert clip_box((47, 31, 47, 31), 48, 32) == [47.0, 31.0, 48.0, 32.0]
    assert clip_box((50, 1, 55, 10), 48, 32) is None  # no pixel inside


@pytest.fixture(scope="module")
def border(tmp_path_factory):
    return write_msra_lists(make_border_vid(tmp_path_factory.mktemp("border")))


def test_training_keeps_frames_with_border_boxes_clipped(border):
    ds = build(
        border,
        ann_file="ImageSets/VID_train_15frames.txt",
        filter_cfg=dict(filter_empty_gt=True),
        on_bad_frame="raise",
    )
    assert ds.clip_boxes and ds.skipped_frames == []
    keys = {(i["video"], i["frame_id"]): i for i in map(ds.get_data_info, range(len(ds)))}
    assert len(keys) == 15 + 4  # every listed key frame with objects
    assert [o["bbox"] for o in keys[(TRAIN_A, 15)]["instances"]] == [[40.0, 0.0, 48.0, 10.0]]
    assert [o["bbox"] for o in keys[(TRAIN_A, 16)]["instances"]] == [[16.0, 25.0, 26.0, 32.0]]
    # the dog right of the image is dropped (and counted), the frame kept with the other dog
    assert [o["bbox"] for o in keys[(TRAIN_B, 2)]["instances"]] == [[1.0, 1.0, 11.0, 11.0]]
    assert (
        len(ds.dropped_objects) == 1
        and "000002.xml: object 1 (50, 1, 55, 10) outside" in ds.dropped_objects[0]
    )


def test_test_mode_keeps_border_boxes_as_given(border):
    ds = build(border, ann_file="ImageSets/VID_val_videos.txt", test_mode=True)
    assert not ds.clip_boxes and len(ds) == 3
    assert [o["bbox"] for o in ds.get_data_info(2)["instances"]] == [
        [2.0, 3.0, 12.0, 13.0],
        [38.0, 4.0, 49.0, 14.0],
        [0.0, 22.0, 10.0, 33.0],
    ]
    clipped = build(
        border, ann_file="ImageSets/VID_val_videos.txt", test_mode=True, clip_boxes=True
    )
    assert [o["bbox"] for o in clipped.get_data_info(2)["instances"]][1:] == [
        [38.0, 4.0, 48.0, 14.0],
        [0.0, 22.0, 10.0, 32.0],
    ]


def test_inverted_box_is_a_bad_frame(border, tmp_path):
    from tsm_apps.data.vid_layout import VIDObject

    bad = tmp_path / "inv"
    shutil.copytree(border, bad)
    write_frame(bad, "val", VAL, 1, [VIDObject(0, "n02958343", (12, 3, 11, 12))])
    with pytest.raises(ValueError, match=r"000001.xml: object 0 box \(12, 3, 11, 12\) is inverted"):
        build(bad, ann_file="ImageSets/VID_val_videos.txt", test_mode=True)
    ds = build(bad, ann_file="ImageSets/VID_val_videos.txt", test_mode=True, on_bad_frame="skip")
    assert len(ds) == 2 and len(ds.skipped_frames) == 1
