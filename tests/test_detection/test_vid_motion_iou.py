"""Motion IoU, the score that puts each ground-truth object in the slow / medium / fast split:
computed from the XML of neighbouring frames, or read from a ``.mat`` in the layout of FGFA's
published file (a (frames, 1) cell array of (objects, 1) vectors), with the same figures either
way, values computed by hand."""

import shutil

import pytest
import torch

from detection.metric import VIDMetric
from detection.vid_dataset import ImageNetVIDDataset
from vid_fixtures import CAR_LABEL as CAR
from vid_fixtures import CAT_LABEL as CAT
from vid_fixtures import DOG_LABEL as DOG
from vid_fixtures import GT, VAL, make_vid, sample

CLASSES = ImageNetVIDDataset.METAINFO["classes"]


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return make_vid(tmp_path_factory.mktemp("vidm"))


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
