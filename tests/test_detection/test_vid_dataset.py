"""ImageNetVIDDataset on a tiny generated ILSVRC2015 layout (VID val/train, DET)."""

import shutil

import pytest
import torch

from detection.clips import KeyFrameIndex
from detection.vid_dataset import ImageNetVIDDataset
from detection.vid_index import key_positions
from vid_fixtures import CAR_LABEL as CAR
from vid_fixtures import DOG_LABEL as DOG
from vid_fixtures import TRAIN_A, TRAIN_B, VAL, build, make_vid, write_msra_lists


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return make_vid(tmp_path_factory.mktemp("vid"))


def test_key_positions():
    assert key_positions(20, 4) == [2, 7, 12, 17]
    assert key_positions(5, 4) == [0, 1, 3, 4]
    assert key_positions(3, 15) == [0, 1, 2] and key_positions(4, None) == [0, 1, 2, 3]


def test_val_entries(root):
    ds = build(root, test_mode=True)
    assert isinstance(ds, ImageNetVIDDataset) and len(ds) == 3 and ds.num_frames() == 3
    info = ds.get_data_info(1)
    assert info["img_id"] == f"val/{VAL}/000001"
    assert info["img_path"] == str(root / "Data" / "VID" / "val" / VAL / "000001.JPEG")
    assert (info["height"], info["width"]) == (32, 48)
    assert info["instances"] == [
        {"bbox": [2.0, 3.0, 12.0, 13.0], "bbox_label": CAR, "ignore_flag": 0, "instance_id": 0},
        {"bbox": [20.0, 4.0, 30.0, 14.0], "bbox_label": DOG, "ignore_flag": 0, "instance_id": 1},
    ]
    assert (info["video"], info["frame_id"], info["video_length"]) == (VAL, 1, 3)
    assert info["key_frame"] is True and info["corruption"] is None
    assert ds.video_index == {VAL: [0, 1, 2]}
    assert len(ds.metainfo["classes"]) == 30 and ds.metainfo["classes"][CAR] == "car"


def test_class_subset_drops_other_objects(root):
    ds = build(root, test_mode=True, metainfo=dict(classes=("dog", "n02121808")))
    assert [(i["bbox_label"], i["instance_id"]) for i in ds.get_data_info(2)["instances"]] == [
        (0, 1),
        (1, 2),
    ]
    assert ds.get_data_info(0)["instances"] == []
    with pytest.raises(ValueError, match="'unicorn' is neither"):
        build(root, metainfo=dict(classes=("unicorn",)))


def test_train_key_frames_and_clips(root):
    ds = build(
        root,
        ann_file="ImageSets/VID/train.txt",
        frames_per_video=4,
        filter_cfg=dict(filter_empty_gt=True),
    )
    # A: 20 frames -> keys 2, 7, 12, 17; B: 5 frames -> 0, 1, 3, 4 minus the empty frame 0
    assert len(ds) == 7 and ds.num_frames() == 25
    keys = [(ds.get_data_info(i)["video"], ds.get_data_info(i)["frame_id"]) for i in range(7)]
    assert keys == [
        (TRAIN_A, 2),
        (TRAIN_A, 7),
        (TRAIN_A, 12),
        (TRAIN_A, 17),
        (TRAIN_B, 1),
        (TRAIN_B, 3),
        (TRAIN_B, 4),
    ]
    assert not any(ds.get_data_info(i)["key_frame"] for i in range(7, 25))
    frame_ids = {
        v: [ds.get_data_info(i)["frame_id"] for i in idx] for v, idx in ds.video_index.items()
    }
    assert frame_ids == {TRAIN_A: list(range(20)), TRAIN_B: list(range(5))}
    ids = lambda idx: [ds.get_data_info(i)["frame_id"] for i in idx]  # noqa: E731
    assert ids(ds.clip_indices(0, 4)) == [0, 1, 2, 3]  # key frame 2, start of video
    assert ids(ds.clip_indices(2, 4)) == [9, 10, 11, 12]
    assert ids(ds.clip_indices(4, 8)) == [0, 1, 2, 3, 4, 4, 4, 4]  # B is shorter: repeat
    assert ds[20] is not None  # a non-key frame loads


def test_snippet_list_and_det_images(root):
    ds = build(
        root,
        ann_file="ImageSets/VID/train_9.txt",
        split="train",
        det_ann_file="ImageSets/DET/train_7.txt",
    )
    assert len(ds) == 5 + 2  # dog snippet + 2 DET images
    det = ds.get_data_info(5)
    entry = "ILSVRC2013_train/n02958343/n02958343_1"
    assert det["img_id"] == f"DET/train/{entry}" and det["video"] == f"DET/{entry}"
    assert (det["frame_id"], det["video_length"]) == (0, 1)
    assert det["instances"] == [
        {"bbox": [1.0, 2.0, 31.0, 21.0], "bbox_label": CAR, "ignore_flag": 0, "instance_id": 0}
    ]
    assert ds.get_data_info(6)["instances"] == []


def test_bad_frames(root, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(root, bad)
    xml = bad / "Annotations" / "VID" / "val" / VAL / "000001.xml"
    xml.write_text("<annotation><folder>x</folder>")
    with pytest.raises(ValueError, match="000001.xml: not well-formed"):
        build(bad)
    ds = build(bad, on_bad_frame="skip", test_mode=True)
    assert len(ds) == 2 and len(ds.skipped_frames) == 1
    (bad / "Data" / "VID" / "val" / VAL / "000002.JPEG").unlink()
    ds = build(bad, on_bad_frame="skip", test_mode=True)
    assert len(ds) == 1 and "000002.JPEG: image missing" in ds.skipped_frames[1]
    shutil.copy(root / "Annotations" / "VID" / "val" / VAL / "000001.xml", xml)
    with pytest.raises(ValueError, match="000002.JPEG: image missing"):
        build(bad)
    with pytest.raises(ValueError, match="on_bad_frame"):
        build(root, on_bad_frame="ignore")


def test_pipeline_packs_boxes_in_pixels(root):
    pipeline = [
        dict(type="LoadImageFromFile"),
        dict(type="LoadAnnotations", with_bbox=True),
        dict(
            type="PackDetInputs",
            meta_keys=("img_id", "img_path", "ori_shape", "img_shape", "video", "frame_id"),
        ),
    ]
    item = build(root, test_mode=True, pipeline=pipeline)[1]
    sample = item["data_samples"]
    assert item["inputs"].shape == (3, 32, 48)
    assert torch.equal(
        sample.gt_instances.bboxes.tensor,
        torch.tensor([[2.0, 3.0, 12.0, 13.0], [20.0, 4.0, 30.0, 14.0]]),
    )
    assert sample.gt_instances.labels.tolist() == [CAR, DOG]
    assert (sample.video, sample.frame_id) == (VAL, 1)


def test_the_clip_key_mark_reaches_the_packed_sample(root):
    pipeline = [
        dict(type="LoadImageFromFile"),
        dict(type="LoadAnnotations", with_bbox=True),
        dict(type="PackDetInputs", meta_keys=("img_id", "frame_id", "clip_key")),
    ]
    ds = build(root, pipeline=pipeline)
    key, plain = ds[KeyFrameIndex(1)]["data_samples"], ds[1]["data_samples"]
    assert (key.frame_id, key.clip_key) == (1, True)
    assert (plain.frame_id, plain.clip_key) == (1, False)


def test_synthetic_set_round_trip(tmp_path):
    """The synthetic VID set: every frame parsed, corruptions from its sidecar, and a detector
    that returns the ground truth scores 100 in every split."""
    import json

    from detection.metric import VIDMetric
    from tsm_apps.synth.vid import generate

    root = generate(
        tmp_path / "synth", train_videos=2, val_videos=2, frames=12, width=64, height=64, seed=3
    )
    ds = build(root, test_mode=True)
    side = json.loads((root / "corruptions.json").read_text())["val"]
    expected = [
        side.get(i["video"], {}).get(str(i["frame_id"]))
        for i in map(ds.get_data_info, range(len(ds)))
    ]
    assert len(ds) == 24 and any(expected)
    assert [ds.get_data_info(i)["corruption"] for i in range(len(ds))] == expected
    metric = VIDMetric()
    metric.dataset_meta = ds.metainfo
    for i in range(len(ds)):
        inst = ds.get_data_info(i)["instances"]
        metric.process(
            {},
            [
                {
                    "img_path": ds.get_data_info(i)["img_path"],
                    "pred_instances": {
                        "bboxes": torch.tensor([o["bbox"] for o in inst]).reshape(-1, 4),
                        "scores": torch.ones(len(inst)),
                        "labels": torch.tensor([o["bbox_label"] for o in inst], dtype=torch.long),
                    },
                }
            ],
        )
    m = metric.evaluate(len(ds))
    assert m["n_gt"] == m["n_gt_slow"] + m["n_gt_medium"] + m["n_gt_fast"] > 0
    for key in ("mAP", "mAP_slow", "mAP_medium", "mAP_fast", "mAP_corrupted"):
        assert m[key] is None or m[key] == pytest.approx(100.0), key
    assert m["mAP"] == pytest.approx(100.0) and m["mAP_corrupted"] == pytest.approx(100.0)
    # the paper config's lists on the same tree: 12-frame snippets give 12 key frames each
    # (FGFA's floor(12(2i+1)/30) has 12 distinct values); all 12 DET images listed, the 3
    # without objects skipped as key frames, non-VID objects dropped
    train = build(
        root,
        ann_file="ImageSets/VID_train_15frames.txt",
        det_ann_file="ImageSets/DET_train_30classes.txt",
        filter_cfg=dict(filter_empty_gt=True),
    )
    infos = [train.get_data_info(i) for i in range(train.num_frames())]
    det = [i for i in infos if i["video"].startswith("DET/")]
    assert len(train) == 2 * 12 + 9 and len(det) == 12
    assert all(
        lab in (0, 6, 27, 29) for i in det for lab in (o["bbox_label"] for o in i["instances"])
    )  # airplane, car, watercraft, zebra
    val = build(root, ann_file="ImageSets/VID_val_videos.txt", test_mode=True)
    assert [val.get_data_info(i)["img_id"] for i in range(len(val))] == [
        ds.get_data_info(i)["img_id"] for i in range(len(ds))
    ]


@pytest.fixture(scope="module")
def msra(tmp_path_factory):
    return write_msra_lists(make_vid(tmp_path_factory.mktemp("msra")))


def test_msra_train_lists_key_frames_and_det_paths(msra):
    ds = build(
        msra,
        ann_file="ImageSets/VID_train_15frames.txt",
        det_ann_file="ImageSets/DET_train_30classes.txt",
    )
    keys = [ds.get_data_info(i) for i in range(len(ds))]
    a = [k["frame_id"] for k in keys if k["video"] == TRAIN_A]
    b = [k["frame_id"] for k in keys if k["video"] == TRAIN_B]
    assert a == [0, 2, 3, 4, 6, 7, 8, 10, 11, 12, 14, 15, 16, 18, 19] and b == [0, 1, 2, 3, 4]
    det = [k for k in keys if k["video"].startswith("DET/")]
    entry = "ILSVRC2013_train/n02958343/n02958343_1"
    assert det[0]["img_path"] == str(msra / "Data" / "DET" / "train" / entry) + ".JPEG"
    assert det[0]["instances"] == [
        {"bbox": [1.0, 2.0, 31.0, 21.0], "bbox_label": CAR, "ignore_flag": 0, "instance_id": 0}
    ]  # tench dropped
    assert len(ds) == 15 + 5 + 2 and ds.num_frames() == 20 + 5 + 2  # every frame for clips
    assert ds.get_data_info(0)["video_length"] == 20
    ds = build(
        msra,
        ann_file="ImageSets/VID_train_15frames.txt",
        det_ann_file="ImageSets/DET_train_30classes.txt",
        filter_cfg=dict(filter_empty_gt=True),
    )
    assert len(ds) == 15 + 4 + 1  # TRAIN_B's frame 0 and the second DET image are empty


def test_msra_val_videos_list_is_every_frame_in_test_mode(msra):
    ds = build(msra, ann_file="ImageSets/VID_val_videos.txt", test_mode=True)
    assert len(ds) == 3 and [ds.get_data_info(i)["img_id"] for i in range(3)] == [
        f"val/{VAL}/{f:06d}" for f in range(3)
    ]
    frames = build(msra, ann_file="ImageSets/VID/val.txt", test_mode=True)
    assert [ds.get_data_info(i) for i in range(3)] == [frames.get_data_info(i) for i in range(3)]


def test_malformed_lists_name_file_and_line(msra, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text(f"train/{TRAIN_A} 1 0 20\ntrain/{TRAIN_A} 1\n")
    with pytest.raises(ValueError, match=r"bad.txt:2: expected .*4 columns as line 1"):
        build(msra, ann_file=str(bad))
    bad.write_text(f"train/{TRAIN_A} 1 x 20\n")
    with pytest.raises(ValueError, match=r"bad.txt:1: '1 x 20' are not integers"):
        build(msra, ann_file=str(bad))
