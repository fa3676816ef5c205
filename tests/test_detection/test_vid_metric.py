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
from vid_fixtures import VAL, make_border_vid, make_vid

CLASSES = ImageNetVIDDataset.METAINFO["classes"]
CAR, DOG, CAT = 6, 8, 9
GT = {
    0: [([2, 3, 12, 13], CAR)],
    1: [([2, 3, 12, 13], CAR), ([20, 4, 30, 14], DOG)],
    2: [([2, 3, 12, 13], CAR), ([25, 4, 35, 14], DOG), ([0, 20, 10, 30], CAT)],
}


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return make_vid(tmp_path_factory.mktemp("vidm"))


def sample(root, t, boxes):
    """An mmdet data sample as the test loop hands it to the metric (``to_dict()`` form)."""
    b = torch.tensor([x for x, _ in boxes], dtype=torch.float32).reshape(-1, 4)
    return {
        "img_path": str(root / "Data" / "VID" / "val" / VAL / f"{t:06d}.JPEG"),
        "img_id": f"val/{VAL}/{t:06d}",
        "pred_instances": {
            "bboxes": b,
            "scores": torch.linspace(0.9, 0.5, len(boxes)),
            "labels": torch.tensor([c for _, c in boxes], dtype=torch.long),
        },
    }


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


def test_motion_iou_from_fgfa_mat_agrees_with_the_computed_split(root, tmp_path):
    import numpy as np
    import scipy.io

    data = tmp_path / "m"
    shutil.copytree(root, data)
    (data / "ImageSets" / "VID_val_videos.txt").write_text(f"val/{VAL} 1 0 3\n")

    def write(values):  # FGFA's layout: a (frames, 1) cell array of (objects, 1) vectors
        cells = np.empty((len(values), 1), object)
        for i, v in enumerate(values):
            cells[i, 0] = np.array(v, np.float64).reshape(-1, 1)
        scipy.io.savemat(str(data / "motion.mat"), {"motion_iou": cells})

    def run(**kw):
        m = VIDMetric(**kw)
        m.dataset_meta = {"classes": CLASSES}
        m.process({}, [sample(data, t, [(x, c) for x, c in GT[t] if c != DOG]) for t in GT])
        return m.evaluate(3)

    # by hand: car static 1.0; dog moves 5 of 10 px: IoU 50/150; cat alone in its track: 0
    write([[1.0], [1.0, 1 / 3], [1.0, 1 / 3, 0.0]])
    computed, from_mat = run(), run(motion_iou_file="motion.mat")
    assert from_mat == computed and computed["n_gt_fast"] == 3
    write([[1.0], [1.0, 0.8], [1.0, 0.8, 0.95]])  # the file decides: dog medium, cat slow
    m = run(motion_iou_file=str(data / "motion.mat"))
    assert (m["n_gt_slow"], m["n_gt_medium"], m["n_gt_fast"]) == (4, 2, 0)
    assert m["mAP_medium"] == 0.0 and m["mAP_slow"] == pytest.approx(100.0)
    write([[1.0], [1.0], [1.0, 0.8, 0.95]])
    with pytest.raises(
        ValueError,
        match=r"motion.mat: cell 2 .* has 1 values, but the frame's "
        r"XML has 2 objects",
    ):
        run(motion_iou_file="motion.mat")


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


def test_computed_motion_iou_equals_fgfas_mat_layout_on_the_same_snippets(tmp_path):
    """A tiny tree in the real layout (two val snippets, VID_val_videos.txt) and a ``.mat`` in
    the layout of FGFA's published file (a (frames, 1) cell array of (objects, 1) vectors, an
    all-ones cell stored as uint8, an empty frame as a (1, 0) cell), its values computed by
    hand: the loader reads them, the computed motion IoU equals them, and the metric gives the
    same figures either way."""
    import numpy as np
    import scipy.io

    from tsm_apps.data.motion import read_motion_iou_mat, snippet_motion_iou
    from tsm_apps.data.vid_layout import VIDObject, read_frame_xml
    from vid_fixtures import CAR as CAR_ID
    from vid_fixtures import CAT as CAT_ID
    from vid_fixtures import DOG as DOG_ID
    from vid_fixtures import write_snippet

    a, b = "ILSVRC2015_val_00000000", "ILSVRC2015_val_00001000"
    car = VIDObject(0, CAR_ID, (2, 3, 11, 12))  # static: 1 (slow)
    dog = [VIDObject(1, DOG_ID, (20 + 5 * k, 4, 29 + 5 * k, 13)) for k in range(3)]
    write_snippet(tmp_path, "VID", "val", a, [[car], [car, dog[0]], [car, dog[1]], [car, dog[2]]])
    cat = [VIDObject(0, CAT_ID, (30, 10 + k, 39, 19 + k)) for k in range(3)]
    write_snippet(tmp_path, "VID", "val", b, [[], [cat[0]], [cat[1]], [cat[2]]])
    (tmp_path / "ImageSets").mkdir()
    (tmp_path / "ImageSets" / "VID_val_videos.txt").write_text(f"val/{a} 1 0 4\nval/{b} 5 0 4\n")
    # by hand (10x10 boxes): the dog moves 5 px a frame: IoU 50/150 = 1/3 one frame apart, 0 two
    # apart -> 1/6, 1/3, 1/6 (fast); the cat 1 px: 90/110 = 9/11, 2 px: 80/120 = 2/3 ->
    # (9/11 + 2/3) / 2 = 49/66, 9/11, 49/66 (medium)
    hand = [[1.0], [1.0, 1 / 6], [1.0, 1 / 3], [1.0, 1 / 6], [], [49 / 66], [9 / 11], [49 / 66]]
    cells = np.empty((8, 1), object)
    for i, v in enumerate(hand):
        cells[i, 0] = np.array(v, np.float64).reshape(-1, 1) if v else np.zeros((1, 0))
    cells[0, 0] = np.ones((1, 1), np.uint8)  # as 739 cells of the file
    scipy.io.savemat(str(tmp_path / "motion.mat"), {"motion_iou": cells})

    def flat(rows):
        return [v for r in rows for v in r]

    read = [r.tolist() for r in read_motion_iou_mat(tmp_path / "motion.mat")]
    assert [len(r) for r in read] == [len(h) for h in hand]
    assert flat(read) == pytest.approx(flat(hand), abs=1e-15)
    computed = []
    for snippet in (a, b):
        ann = tmp_path / "Annotations" / "VID" / "val" / snippet
        computed += snippet_motion_iou([read_frame_xml(ann / f"{t:06d}.xml") for t in range(4)])
    assert [len(c) for c in computed] == [len(r) for r in read]
    assert flat(computed) == pytest.approx(flat(read), abs=1e-12)

    def run(**kw):
        m = VIDMetric(**kw)
        m.dataset_meta = {"classes": CLASSES}
        found = []
        for snippet, frames in (
            (a, [[car], [car, dog[0]], [car], [car, dog[2]]]),
            (b, [[], [cat[0]], [cat[1]], [cat[2]]]),
        ):
            for t, objs in enumerate(frames):  # the dog missed at frame 2 of a
                boxes = torch.tensor(
                    [[o.box[0], o.box[1], o.box[2] + 1, o.box[3] + 1] for o in objs],
                    dtype=torch.float32,
                ).reshape(-1, 4)
                labels = torch.tensor(
                    [{CAR_ID: CAR, DOG_ID: DOG, CAT_ID: CAT}[o.name] for o in objs],
                    dtype=torch.long,
                )
                found.append(
                    {
                        "img_path": str(
                            tmp_path / "Data" / "VID" / "val" / snippet / f"{t:06d}.JPEG"
                        ),
                        "pred_instances": {
                            "bboxes": boxes,
                            "labels": labels,
                            "scores": torch.full((len(objs),), 0.9),
                        },
                    }
                )
        m.process({}, found)
        return m.evaluate(len(found))

    from_xml, from_mat = run(), run(motion_iou_file="motion.mat")
    assert from_mat == from_xml
    assert (from_xml["n_gt_slow"], from_xml["n_gt_medium"], from_xml["n_gt_fast"]) == (4, 3, 3)
    assert from_xml["mAP_slow"] == pytest.approx(100.0)
    assert from_xml["mAP_fast"] == pytest.approx(100.0 * 2 / 3, abs=0.01)  # 2 of 3 dog boxes


def test_an_empty_fgfa_cell_reads_as_one_zero_for_a_one_object_frame(root, tmp_path):
    """FGFA's expression reads a (1, 0) cell as one value 0; a frame with one object then gets
    motion IoU 0 (fast), whatever the XML says."""
    import numpy as np
    import scipy.io

    data = tmp_path / "e"
    shutil.copytree(root, data)
    (data / "ImageSets" / "VID_val_videos.txt").write_text(f"val/{VAL} 1 0 3\n")
    cells = np.empty((3, 1), object)
    cells[0, 0] = np.zeros((1, 0))  # frame 0: the static car alone
    cells[1, 0], cells[2, 0] = np.ones((2, 1)), np.ones((3, 1))
    scipy.io.savemat(str(data / "motion.mat"), {"motion_iou": cells})
    m = VIDMetric(motion_iou_file="motion.mat")
    m.dataset_meta = {"classes": CLASSES}
    m.process({}, [sample(data, t, GT[t]) for t in GT])
    res = m.evaluate(3)
    assert (res["n_gt_slow"], res["n_gt_medium"], res["n_gt_fast"]) == (5, 0, 1)
