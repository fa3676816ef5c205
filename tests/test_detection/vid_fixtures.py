"""A tiny ImageNet-VID (+ DET) layout on disk, written with tsm_apps.data.vid_layout."""

from pathlib import Path

import numpy as np
import torch
from mmdet.registry import DATASETS
from mmengine.registry import init_default_scope
from PIL import Image

from tsm_apps.data.vid_image_sets import write_image_sets
from tsm_apps.data.vid_layout import (
    VIDFrame,
    VIDObject,
    frame_to_xml,
    read_frame_xml,
)

CAR, DOG, CAT = "n02958343", "n02084071", "n02121808"
W, H = 48, 32
VAL = "ILSVRC2015_val_00000000"
TRAIN_A = "ILSVRC2015_VID_train_0000/ILSVRC2015_train_00000000"
TRAIN_B = "ILSVRC2015_VID_train_0000/ILSVRC2015_train_00001000"


def write_image(path: Path, value: int = 128) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.full((H, W, 3), value, np.uint8)).save(path, format="JPEG")


def write_snippet(root: Path, source: str, split: str, snippet: str, frames: list) -> None:
    """``frames``: per frame a list of ``VIDObject``; images and XML named %06d."""
    for t, objects in enumerate(frames):
        name = f"{t:06d}"
        xml = root / "Annotations" / source / split / snippet / f"{name}.xml"
        xml.parent.mkdir(parents=True, exist_ok=True)
        xml.write_bytes(frame_to_xml(VIDFrame(snippet, name, W, H, list(objects))))
        write_image(root / "Data" / source / split / snippet / f"{name}.JPEG", 10 * t)


def val_frames() -> list:
    """3 frames: car (track 0) static at (2,3)-(11,12) incl.; dog (track 1) moves 5 px/frame
    from frame 1; frame 2 also holds a cat (track 2)."""
    car = VIDObject(0, CAR, (2, 3, 11, 12))
    return [
        [car],
        [car, VIDObject(1, DOG, (20, 4, 29, 13))],
        [car, VIDObject(1, DOG, (25, 4, 34, 13)), VIDObject(2, CAT, (0, 20, 9, 29))],
    ]


# val_frames() as the metric is handed it: edge-coordinate boxes (XML max + 1) and label indices
# among the 30 VID classes
CAR_LABEL, DOG_LABEL, CAT_LABEL = 6, 8, 9
GT = {
    0: [([2, 3, 12, 13], CAR_LABEL)],
    1: [([2, 3, 12, 13], CAR_LABEL), ([20, 4, 30, 14], DOG_LABEL)],
    2: [([2, 3, 12, 13], CAR_LABEL), ([25, 4, 35, 14], DOG_LABEL), ([0, 20, 10, 30], CAT_LABEL)],
}


def sample(root: Path, t: int, boxes: list) -> dict:
    """An mmdet data sample of val frame ``t`` as the test loop hands it to the metric
    (``to_dict()`` form); ``boxes``: ``(box, label)`` pairs, scored 0.9 down to 0.5."""
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


def make_vid(root: Path) -> Path:
    """val: one 3-frame snippet; train: a 20-frame (car) and a 5-frame (dog, empty frame 0)
    snippet; DET: two images (one with a car and a non-VID object), plus a negative line."""
    write_snippet(root, "VID", "val", VAL, val_frames())
    write_snippet(
        root, "VID", "train", TRAIN_A, [[VIDObject(3, CAR, (t, 0, t + 9, 9))] for t in range(20)]
    )
    write_snippet(
        root,
        "VID",
        "train",
        TRAIN_B,
        [[]] + [[VIDObject(0, DOG, (1, 1, 10, 10))] for _ in range(4)],
    )
    write_image_sets(root, {TRAIN_A: (20, {CAR}), TRAIN_B: (5, {DOG})}, {VAL: 3})
    det = root / "Annotations" / "DET" / "train" / "ILSVRC2013_train" / "n02958343"
    det.mkdir(parents=True)
    (det / "n02958343_1.xml").write_text(
        "<annotation><folder>n02958343</folder><filename>n02958343_1</filename>"
        f"<size><width>{W}</width><height>{H}</height></size>"
        "<object><name>n02958343</name><bndbox><xmin>1</xmin><ymin>2</ymin><xmax>30</xmax>"
        "<ymax>20</ymax></bndbox></object>"
        "<object><name>n01440764</name><bndbox><xmin>0</xmin><ymin>0</ymin><xmax>5</xmax>"
        "<ymax>5</ymax></bndbox></object></annotation>"
    )
    (det / "n02958343_2.xml").write_text(
        "<annotation><folder>n02958343</folder><filename>n02958343_2</filename>"
        f"<size><width>{W}</width><height>{H}</height></size></annotation>"
    )
    for i in (1, 2):
        write_image(
            root
            / "Data"
            / "DET"
            / "train"
            / "ILSVRC2013_train"
            / "n02958343"
            / f"n02958343_{i}.JPEG"
        )
    sets = root / "ImageSets" / "DET"
    sets.mkdir(parents=True)
    (sets / "train_7.txt").write_text(
        "ILSVRC2013_train/n02958343/n02958343_1 1\n"
        "ILSVRC2013_train/n02958343/n02958343_2 1\n"
        "ILSVRC2013_train/n02958343/n02958343_9 -1\n"
    )
    return root


def build(root: Path, **kw):
    """An ``ImageNetVIDDataset`` on the tree ``root``, built through mmdet's registry; the
    annotation list ``ImageSets/VID/val.txt`` unless ``ann_file`` is given."""
    init_default_scope("mmdet")
    kw.setdefault("ann_file", "ImageSets/VID/val.txt")
    return DATASETS.build(dict(type="ImageNetVIDDataset", data_root=str(root), **kw))


def write_msra_lists(root: Path) -> Path:
    """FGFA/MSRA lists for :func:`make_vid`'s tree, written by hand (not by the code under test):
    15-frame keys of the 20-frame and 5-frame snippets, the val video, both DET images."""
    keys_20 = [0, 2, 3, 4, 6, 7, 8, 10, 11, 12, 14, 15, 16, 18, 19]  # floor(20(2i+1)/30)
    keys_5 = [0, 1, 2, 3, 4]  # 15 values, 5 distinct
    sets = root / "ImageSets"
    (sets / "VID_train_15frames.txt").write_text(
        "".join(f"train/{TRAIN_A} 1 {k} 20\n" for k in keys_20)
        + "".join(f"train/{TRAIN_B} 1 {k} 5\n" for k in keys_5)
    )
    (sets / "VID_val_videos.txt").write_text(f"val/{VAL} 1 0 3\n")
    (sets / "DET_train_30classes.txt").write_text(
        "train/ILSVRC2013_train/n02958343/n02958343_1 1\n"
        "train/ILSVRC2013_train/n02958343/n02958343_2 1\n"
    )
    return root


def write_frame(root: Path, split: str, snippet: str, t: int, objects: list) -> None:
    """Overwrite frame ``t``'s XML of a VID snippet with ``objects`` (``VIDObject``)."""
    xml = root / "Annotations" / "VID" / split / snippet / f"{t:06d}.xml"
    xml.write_bytes(frame_to_xml(VIDFrame(snippet, f"{t:06d}", W, H, list(objects))))


def make_border_vid(root: Path) -> Path:
    """:func:`make_vid`'s tree with boxes on and past the 48x32 border, as the ILSVRC XML has
    them: val frame 2's dog ends at xmax = 48 = width and its cat at ymax = 32 = height; train
    A's frame 15 car at xmax = 49, frame 16 at ymax = 32; train B's frame 2 also holds a dog
    entirely right of the image (xmin = 50)."""
    make_vid(root)
    car = VIDObject(0, CAR, (2, 3, 11, 12))
    write_frame(
        root,
        "val",
        VAL,
        2,
        [car, VIDObject(1, DOG, (38, 4, 48, 13)), VIDObject(2, CAT, (0, 22, 9, 32))],
    )
    write_frame(root, "train", TRAIN_A, 15, [VIDObject(3, CAR, (40, 0, 49, 9))])
    write_frame(root, "train", TRAIN_A, 16, [VIDObject(3, CAR, (16, 25, 25, 32))])
    write_frame(
        root,
        "train",
        TRAIN_B,
        2,
        [VIDObject(0, DOG, (1, 1, 10, 10)), VIDObject(1, DOG, (50, 1, 55, 10))],
    )
    return root


def push_to_border(root: Path) -> list:
    """Boxes on the border in any VID tree (e.g. ``tsm synth vid``'s): in every snippet, the
    first object of frames 0, 3, 6, ... ends at xmax = width, of frames 1, 4, 7, ... at ymax =
    height (XML rewritten); returns ``(split, snippet, frame, 'x' | 'y')`` of the changed
    frames."""
    changed, ann = [], root / "Annotations" / "VID"
    for xml in sorted(ann.glob("*/**/*.xml")):
        frame, t = read_frame_xml(xml), int(xml.stem)
        if not frame.objects or t % 3 == 2:
            continue
        o = frame.objects[0]
        o.box = (
            (o.box[0], o.box[1], frame.width, o.box[3])
            if t % 3 == 0
            else (o.box[0], o.box[1], o.box[2], frame.height)
        )
        xml.write_bytes(frame_to_xml(frame))
        changed.append(
            (xml.relative_to(ann).parts[0], xml.parent.name, t, "x" if t % 3 == 0 else "y")
        )
    return changed
