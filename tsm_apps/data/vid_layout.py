"""The ILSVRC2015 VID layout: the 30 classes, snippet names, paths and per-frame XML.

Layout under a data root (ILSVRC2015 devkit, readme section 4.2)::

    Data/VID/{train,val,test}/<snippet>/%06d.JPEG        frames, index from 0
    Annotations/VID/{train,val,test}/<snippet>/%06d.xml  one XML per frame
    ImageSets/                    the split lists (:mod:`tsm_apps.data.vid_image_sets`)

Train snippets are ``ILSVRC2015_VID_train_%04d/ILSVRC2015_train_%05d%03d`` (batch of 1000,
video id, snippet id); val snippets ``ILSVRC2015_val_%05d%03d``, test snippets
``ILSVRC2015_test_%08d``. Boxes are integer pixel
coordinates with inclusive ends (``0 <= xmin <= xmax <= width - 1``), the devkit's convention;
the released XML also has boxes on or past the border (``xmax = width``, ``ymax = height``), which
:func:`read_frame_xml` returns as given (FGFA clips them for training, scores them as given).
This module never imports mmdet; ``detection`` parses the same files for training.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

# (WordNet id, name) in ILSVRC2015_VID_ID order 1..30 (devkit data/meta_vid.mat).
VID_CLASSES: tuple[tuple[str, str], ...] = (
    ("n02691156", "airplane"),
    ("n02419796", "antelope"),
    ("n02131653", "bear"),
    ("n02834778", "bicycle"),
    ("n01503061", "bird"),
    ("n02924116", "bus"),
    ("n02958343", "car"),
    ("n02402425", "cattle"),
    ("n02084071", "dog"),
    ("n02121808", "domestic_cat"),
    ("n02503517", "elephant"),
    ("n02118333", "fox"),
    ("n02510455", "giant_panda"),
    ("n02342885", "hamster"),
    ("n02374451", "horse"),
    ("n02129165", "lion"),
    ("n01674464", "lizard"),
    ("n02484322", "monkey"),
    ("n03790512", "motorcycle"),
    ("n02324045", "rabbit"),
    ("n02509815", "red_panda"),
    ("n02411705", "sheep"),
    ("n01726692", "snake"),
    ("n02355227", "squirrel"),
    ("n02129604", "tiger"),
    ("n04468005", "train"),
    ("n01662784", "turtle"),
    ("n04530566", "watercraft"),
    ("n02062744", "whale"),
    ("n02391049", "zebra"),
)
WNID_TO_NAME = dict(VID_CLASSES)
NAME_TO_WNID = {name: wnid for wnid, name in VID_CLASSES}
DATABASE = "ILSVRC_2015"


@dataclass
class VIDObject:
    """One annotated object of a frame; ``box`` = (xmin, ymin, xmax, ymax), inclusive pixels."""

    trackid: int
    name: str  # WordNet id, e.g. "n02958343"
    box: tuple[int, int, int, int]
    occluded: int = 0
    generated: int = 0


@dataclass
class VIDFrame:
    """One frame's annotation: ``folder`` = snippet path under the split, ``filename`` = %06d."""

    folder: str
    filename: str
    width: int
    height: int
    objects: list[VIDObject] = field(default_factory=list)


FRAME_NAME = "{:06d}"
"""A snippet's frame files: ``%06d.JPEG`` under ``Data``, ``%06d.xml`` under ``Annotations``."""
VID_FRAME_TEMPLATE = FRAME_NAME + ".JPEG"


def image_path(root: str | Path, source: str, split: str, entry: str) -> Path:
    """``<root>/Data/<source>/<split>/<entry>.JPEG`` (``source`` VID or DET; ``entry`` a
    ``<snippet>/%06d`` frame or a DET image)."""
    return Path(root, "Data", source, split, entry + ".JPEG")


def annotation_root(root: str | Path, source: str, split: str) -> Path:
    """``<root>/Annotations/<source>/<split>``: the XML of a split (snippet folders, or DET
    image paths, below it)."""
    return Path(root, "Annotations", source, split)


def annotation_path(root: str | Path, source: str, split: str, entry: str) -> Path:
    """``<root>/Annotations/<source>/<split>/<entry>.xml``, the XML of :func:`image_path`."""
    return annotation_root(root, source, split) / (entry + ".xml")


def annotation_folder(image_folder: str | Path) -> Path | None:
    """The annotation folder ``<root>/Annotations/VID/<split>/<snippet>`` of a snippet's frame
    folder ``<root>/Data/VID/<split>/<snippet>``; ``None`` for a folder outside that layout."""
    parts = Path(image_folder).parts
    if len(parts) < 4 or parts[-4:-2] != ("Data", "VID"):
        return None
    return Path(*parts[:-4], "Annotations", "VID", *parts[-2:])


def edge_box(box: tuple[int, int, int, int]) -> list[float]:
    """An XML box (inclusive pixels ``xmin, ymin, xmax, ymax``) in pixel edge coordinates
    ``[xmin, ymin, xmax + 1, ymax + 1]``: the devkit's ``+ 1`` widths."""
    x1, y1, x2, y2 = box
    return [float(x1), float(y1), float(x2) + 1.0, float(y2) + 1.0]


def train_snippet(index: int) -> str:
    """Name of train snippet ``index`` (one snippet per video): batch folder / snippet."""
    return f"ILSVRC2015_VID_train_{index // 1000:04d}/ILSVRC2015_train_{index:05d}000"


def val_snippet(index: int) -> str:
    return f"ILSVRC2015_val_{index:05d}000"


def vid_test_snippet(index: int) -> str:
    """Name of test snippet ``index`` (named ``vid_`` so that test collectors skip it)."""
    return f"ILSVRC2015_test_{index:08d}"


def _sub(parent: ET.Element, tag: str, text: object) -> ET.Element:
    el = ET.SubElement(parent, tag)
    el.text = str(text)
    return el


def frame_to_xml(frame: VIDFrame) -> bytes:
    """The frame's annotation XML, element order as in the released files."""
    root = ET.Element("annotation")
    _sub(root, "folder", frame.folder)
    _sub(root, "filename", frame.filename)
    _sub(ET.SubElement(root, "source"), "database", DATABASE)
    size = ET.SubElement(root, "size")
    _sub(size, "width", frame.width)
    _sub(size, "height", frame.height)
    for obj in frame.objects:
        el = ET.SubElement(root, "object")
        _sub(el, "trackid", obj.trackid)
        _sub(el, "name", obj.name)
        bb = ET.SubElement(el, "bndbox")
        xmin, ymin, xmax, ymax = obj.box
        for tag, v in (("xmax", xmax), ("xmin", xmin), ("ymax", ymax), ("ymin", ymin)):
            _sub(bb, tag, int(v))
        _sub(el, "occluded", obj.occluded)
        _sub(el, "generated", obj.generated)
    ET.indent(root, space="\t")
    return ET.tostring(root, encoding="utf-8") + b"\n"


def _int(el: ET.Element, tag: str, path: Path) -> int:
    child = el.find(tag)
    if child is None or child.text is None:
        raise ValueError(f"{path}: <{el.tag}> has no <{tag}>")
    try:
        return int(child.text.strip())
    except ValueError:
        raise ValueError(f"{path}: <{tag}> is {child.text.strip()!r}, not an integer") from None


def _text(el: ET.Element, tag: str, path: Path) -> str:
    child = el.find(tag)
    if child is None or not (child.text or "").strip():
        raise ValueError(f"{path}: <{el.tag}> has no <{tag}>")
    return child.text.strip()


def read_frame_xml(path: str | Path, det: bool = False) -> VIDFrame:
    """Parse one frame's XML; a missing field, a non-integer, an unknown WordNet id or an
    inverted box (``xmin > xmax`` or ``ymin > ymax``) raises ``ValueError`` naming the file.
    Boxes on or past the image border are returned as given. ``det=True`` reads an ImageNet DET
    image's XML: objects without ``trackid``/``occluded``/``generated`` get their index, 0, 0,
    and objects of the DET classes that are not VID classes are dropped."""
    path = Path(path)
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        raise ValueError(f"{path}: not well-formed XML ({e})") from None
    size = root.find("size")
    if size is None:
        raise ValueError(f"{path}: <annotation> has no <size>")
    frame = VIDFrame(
        _text(root, "folder", path),
        _text(root, "filename", path),
        _int(size, "width", path),
        _int(size, "height", path),
    )
    for i, el in enumerate(root.findall("object")):
        name = _text(el, "name", path)
        if name not in WNID_TO_NAME:
            if det:
                continue
            raise ValueError(f"{path}: object {i} has unknown WordNet id {name!r}")
        bb = el.find("bndbox")
        if bb is None:
            raise ValueError(f"{path}: object {i} has no <bndbox>")
        box = tuple(_int(bb, t, path) for t in ("xmin", "ymin", "xmax", "ymax"))
        if box[0] > box[2] or box[1] > box[3]:
            raise ValueError(
                f"{path}: object {i} box {box} is inverted (expected xmin <= xmax and ymin <= ymax)"
            )
        opt = {
            t: d
            for t, d in (("trackid", i), ("occluded", 0), ("generated", 0))
            if det and el.find(t) is None
        }
        tid, occ, gen = (
            opt[t] if t in opt else _int(el, t, path) for t in ("trackid", "occluded", "generated")
        )
        frame.objects.append(VIDObject(tid, name, box, occ, gen))
    return frame
