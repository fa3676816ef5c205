"""VIDMetric (mmengine) on mmdet-style data samples over a tiny generated VID layout: ground
truth and motion IoU read from the XML next to each image, the corrupted split from the sidecar."""

import json
import shutil

import pytest
import torch

from detection.metric import VIDMetric, split_image_path
from detection.vid_dataset import ImageNetVIDDataset
from fgfa_vid_eval import fgfa_map, snippet_frames
from tsm_apps.data.vid_layout import VID_CLASSES
from vid_fixtures import CAR_LABEL as CAR
from vid_fixtures import CAT_LABEL as CAT
from vid_fixtures import DOG_LABEL as DOG
from vid_fixtures import GT, VAL, make_border_vid, make_vid, sample

CLASSES = ImageNetVIDDataset.METAINFO["classes"]


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return make_vid(tmp_path_factory.mktemp("vidm"))


def evaluate(root, keep=lambda box, c: True):
    m = VIDMetric()
    m.dataset_meta = {"classes": CLASSES}
    m.process({}, [sample(root, t, [(x, c) for x, c in GT[t] if keep(x, c)]) for t in GT])
    return m.evaluate(3)


def test_split_image_path():
    assert split_image_path("/d/vid/Data/VID/val/S/000003.JPEG") == (
        "/d/vid",
        "VID",
        "val",
        "S/000003",
    )
    assert split_image_path("Data/DET/train/a/b/c.JPEG") == (".", "DET", "train", "a/b/c")
    with pytest.raises(ValueError, match="not under <root>/Data"):
        split_image_path("/tmp/frame.jpg")


def test_perfect_detections(root):
    m = evaluate(root)
    assert m["mAP"] == pytest.approx(100.0) and m["mAP_corrupted"] is None
    # car static: motion IoU 1 (slow); dog moves 5 px: IoU 1/3 (fast); cat seen once: no
    # neighbour, 0 (fast, as FGFA's empty .mat cell)
    assert (m["n_gt_slow"], m["n_gt_medium"], m["n_gt_fast"]) == (3, 0, 3)
    assert m["mAP_slow"] == pytest.approx(100.0) and m["mAP_fast"] == pytest.approx(100.0)
    assert m["mAP_medium"] is None and m["AP_bear"] is None


def test_missing_the_fast_object(root):
    m = evaluate(root, keep=lambda box, c: c != DOG)
    assert m["mAP"] == pytest.approx(200 / 3)  # car 100, dog 0, cat 100
    assert m["mAP_slow"] == pytest.approx(100.0)
    assert m["mAP_fast"] == pytest.approx(50.0)  # dog 0, cat 100


def test_corrupted_split_from_sidecar(root, tmp_path):
    data = tmp_path / "c"
    shutil.copytree(root, data)
    (data / "corruptions.json").write_text(json.dumps({"val": {VAL: {"2": "blur"}}, "train": {}}))
    m = evaluate(data, keep=lambda box, c: box != [25, 4, 35, 14])  # miss the dog at t=2
    assert m["mAP_corrupted"] == pytest.approx(200 / 3)  # frame 2: car 100, dog 0, cat 100
    assert m["mAP_corrupted_blur"] == pytest.approx(200 / 3)
    assert m["mAP_clean"] == pytest.approx(100.0)
    ds = ImageNetVIDDataset(data_root=str(data), ann_file="ImageSets/VID/val.txt", test_mode=True)
    assert [ds.get_data_info(i)["corruption"] for i in range(3)] == [None, None, "blur"]
    (data / "corruptions.json").write_text(json.dumps({"val": ["blur"]}))
    with pytest.raises(ValueError, match="corruptions.json: expected"):
        evaluate(data)


def test_metric_needs_classes_and_img_path(root):
    m = VIDMetric()
    with pytest.raises(ValueError, match="img_path"):
        m.process({}, [{"pred_instances": {}}])
    m.process({}, [sample(root, 0, GT[0])])
    with pytest.raises(ValueError, match="dataset_meta"):
        m.compute_metrics(m.results)


def test_det_images_and_bad_neighbour_xml(root, tmp_path):
    m = VIDMetric()
    m.dataset_meta = {"classes": CLASSES}
    img = root / "Data" / "DET" / "train" / "ILSVRC2013_train" / "n02958343" / "n02958343_1.JPEG"
    m.process(
        {},
        [
            {
                "img_path": str(img),
                "pred_instances": {
                    "bboxes": torch.tensor([[1.0, 2.0, 31.0, 21.0]]),
                    "scores": torch.tensor([0.8]),
                    "labels": torch.tensor([CAR]),
                },
            }
        ],
    )
    res = m.evaluate(1)
    assert res["mAP"] == pytest.approx(100.0) and res["n_gt_fast"] == 1  # one frame: fast

    data = tmp_path / "b"
    shutil.copytree(root, data)
    (data / "Annotations" / "VID" / "val" / VAL / "000000.xml").write_text("<annotation>")
    m = VIDMetric()
    m.dataset_meta = {"classes": CLASSES}
    m.process({}, [sample(data, 2, GT[2])])  # frame 0 is only a neighbour: ignored
    assert m.evaluate(1)["mAP"] == pytest.approx(100.0)
    m.process({}, [sample(data, 0, GT[0])])
    with pytest.raises(ValueError, match="000000.xml: not well-formed"):
        m.evaluate(1)


# detections (edge coordinates, as the detector gives them; the dog and cat of frame 2 clipped to
# the 48x32 image) with distinct scores, matched, missed, misclassified and background boxes
BORDER_DETS = {
    0: [([2, 3, 12, 13], CAR, 0.9), ([30, 10, 40, 20], DOG, 0.35)],
    1: [([3, 3, 13, 13], CAR, 0.8), ([20, 4, 30, 14], DOG, 0.6), ([0, 0, 10, 10], CAT, 0.3)],
    2: [
        ([38, 4, 48, 14], DOG, 0.7),
        ([0, 22, 10, 32], CAT, 0.5),
        ([30, 20, 45, 30], CAR, 0.45),
        ([2, 3, 12, 13], CAR, 0.4),
        ([39, 5, 48, 14], CAT, 0.2),
    ],
}


def test_border_boxes_are_scored_as_given_like_fgfa(tmp_path):
    """val XML with xmax = width and ymax = height: evaluation completes and equals the
    re-typed FGFA evaluation (tests/test_detection/fgfa_vid_eval.py) on every split."""
    root = make_border_vid(tmp_path / "b")
    m = VIDMetric()
    m.dataset_meta = {"classes": CLASSES}
    for t, dets in BORDER_DETS.items():
        s = sample(root, t, [(b, c) for b, c, _ in dets])
        s["pred_instances"]["scores"] = torch.tensor([p for _, _, p in dets])
        m.process({}, [s])
    ours = m.evaluate(3)
    wnids = [w for w, _ in VID_CLASSES]
    ref = fgfa_map(
        snippet_frames(
            root / "Annotations" / "VID" / "val" / VAL,
            wnids,
            {
                f"{t:06d}": [(p, c, [b[0], b[1], b[2] - 1, b[3] - 1]) for b, c, p in dets]
                for t, dets in BORDER_DETS.items()
            },
        )
    )
    assert (ours["n_gt_slow"], ours["n_gt_medium"], ours["n_gt_fast"]) == (3, 0, 3)
    for key in ("mAP", "mAP_slow", "mAP_fast"):
        assert ours[key] == pytest.approx(ref[key], abs=1e-9), key
    assert ours["mAP_medium"] is None and ref["mAP_medium"] is None
    # by hand: car 3 GT, ranked 0.9 TP, 0.8 TP, 0.45 FP, 0.4 TP -> AP 1*2/3 + 3/4*1/3 = 11/12;
    # dog 2 GT: 0.7 TP, 0.6 TP, 0.35 FP -> 1; cat 1 GT: 0.5 TP, 0.3 FP, 0.2 FP -> 1
    assert ours["mAP"] == pytest.approx(100 * (11 / 12 + 1 + 1) / 3)
