"""Drawing the synthetic VID/DET objects, the one-frame val objects and the DET part.

* :func:`draw_object`: one of the four VID classes (airplane, car, zebra, watercraft) filling an
  inclusive box; :func:`draw_other`: an object of a DET class that is not a VID class.
* :func:`paste_moving_object`: :func:`draw_object` on a frame, blurred along the object's own
  motion (a streak of ``speed x exposure`` pixels, as a camera shutter blurs a moving object).
* :func:`one_frame_object`: an extra val object seen in a single frame of its snippet (its own
  track; FGFA gives such an object motion IoU 0, "fast").
* :func:`write_det`: a small ImageNet DET part in the real layout,
  ``Data/DET/train/ILSVRC2013_train/<wnid>/<wnid>_<n>.JPEG`` and
  ``Annotations/DET/train/ILSVRC2013_train/<wnid>/<wnid>_<n>.xml`` (DET XML: no ``trackid``);
  images hold VID objects, objects of non-VID classes, or nothing.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from ..data.vid_layout import NAME_TO_WNID, annotation_path, image_path
from .draw import clutter

# DET classes that are not VID classes (tench, soccer ball): dropped by every VID reader
OTHER_WNIDS = ("n01440764", "n04254680")
DET_FOLDER = "ILSVRC2013_train"


def draw_object(draw, cls: str, box: tuple, flip: bool, tone: float) -> None:
    """Draw a ``cls`` object filling the inclusive ``box``; ``flip`` mirrors it left-right."""
    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1

    def pt(u: float, v: float) -> tuple:
        return (x1 + (1 - u if flip else u) * w, y1 + v * h)

    def poly(points, fill, outline=(20, 20, 20)):
        draw.polygon([pt(u, v) for u, v in points], fill=fill, outline=outline)

    def ell(u1, v1, u2, v2, fill, outline=(20, 20, 20)):
        (a, b), (c, d) = pt(u1, v1), pt(u2, v2)
        draw.ellipse([min(a, c), b, max(a, c), d], fill=fill, outline=outline)

    k = int(30 * tone)
    if cls == "airplane":
        grey = (200 + k // 2, 205 + k // 2, 215)
        poly([(0.3, 0.45), (0.62, 0.45), (0.42, 0.0), (0.3, 0.0)], grey)
        poly([(0.3, 0.55), (0.62, 0.55), (0.42, 1.0), (0.3, 1.0)], grey)
        poly([(0.0, 0.5), (0.14, 0.5), (0.06, 0.12), (0.0, 0.12)], grey)
        ell(0.0, 0.36, 1.0, 0.64, grey)
    elif cls == "car":
        red = (200 + k, 30, 35)
        poly([(0.18, 0.48), (0.3, 0.05), (0.72, 0.05), (0.84, 0.48)], (150 + k, 20, 25))
        poly([(0.32, 0.42), (0.38, 0.14), (0.66, 0.14), (0.72, 0.42)], (150, 200, 235))
        poly([(0.0, 0.45), (1.0, 0.45), (1.0, 0.82), (0.0, 0.82)], red)
        ell(0.1, 0.66, 0.34, 1.0, (15, 15, 15))
        ell(0.66, 0.66, 0.9, 1.0, (15, 15, 15))
    elif cls == "zebra":
        white = (235, 235, 228)
        for u in (0.22, 0.32, 0.68, 0.78):
            poly([(u, 0.55), (u + 0.06, 0.55), (u + 0.06, 1.0), (u, 1.0)], (20, 20, 20))
        ell(0.1, 0.15, 0.88, 0.7, white)
        for u in np.arange(0.2, 0.82, 0.1):
            ell(u, 0.2, u + 0.04, 0.66, (15, 15, 15), None)
        poly([(0.78, 0.3), (0.9, 0.0), (1.0, 0.05), (0.92, 0.42)], white)
    else:  # watercraft
        poly([(0.45, 0.0), (0.45, 0.66), (0.9, 0.66)], (245, 245, 240))
        poly([(0.4, 0.12), (0.4, 0.66), (0.1, 0.66)], (225, 225, 215))
        poly([(0.0, 0.68), (1.0, 0.68), (0.84, 1.0), (0.16, 1.0)], (40, 60 + k, 140 + k))


def paste_moving_object(
    img, cls: str, box: tuple, flip: bool, tone: float, streak: tuple[float, float]
):
    """``img`` (PIL RGB) with a ``cls`` object in the inclusive ``box`` composited over it,
    averaged over positions along ``streak`` = ``(dx, dy)`` pixels centred on ``box`` (the
    motion during the exposure); a streak under one pixel draws it sharp, in place."""
    from PIL import Image, ImageDraw

    n = int(np.ceil(np.hypot(*streak)))
    if n <= 1:
        draw_object(ImageDraw.Draw(img), cls, box, flip, tone)
        return img
    layer = Image.new("RGBA", img.size, (0, 0, 0, 0))
    draw_object(ImageDraw.Draw(layer), cls, box, flip, tone)
    rgba = np.asarray(layer, np.float64) / 255.0
    rgba[..., :3] *= rgba[..., 3:]  # premultiplied colour
    h, w = rgba.shape[:2]
    pad = n + 1
    padded = np.pad(rgba, ((pad, pad), (pad, pad), (0, 0)))
    acc = np.zeros_like(rgba)
    for s in np.linspace(-0.5, 0.5, n + 1):
        dx, dy = int(round(s * streak[0])), int(round(s * streak[1]))
        acc += padded[pad - dy : pad - dy + h, pad - dx : pad - dx + w]
    acc /= n + 1
    base = np.asarray(img, np.float64)
    out = base * (1.0 - acc[..., 3:]) + 255.0 * acc[..., :3]
    return Image.fromarray(np.clip(out + 0.5, 0, 255).astype(np.uint8))


def draw_other(draw, wnid: str, box: tuple) -> None:
    """A non-VID DET object (a green fish-like ellipse or a chequered ball) in ``box``."""
    if wnid == OTHER_WNIDS[0]:
        draw.ellipse(list(box), fill=(60, 140, 60), outline=(20, 20, 20))
    else:
        draw.ellipse(list(box), fill=(250, 250, 250), outline=(0, 0, 0), width=2)


def one_frame_object(
    seed: int, index: int, frames: int, width: int, height: int, classes: tuple, stream: int = 2
) -> tuple:
    """``(frame, class name, inclusive box)`` of snippet ``index``'s one-frame object (random
    stream ``[seed, stream, index]``: 2 for the val snippets)."""
    rng = np.random.default_rng([seed, stream, index])
    t = int(rng.integers(0, frames))
    cls = classes[int(rng.integers(len(classes)))]
    h = int(rng.uniform(0.2, 0.3) * height)
    w = int(min(h * 1.4, 0.5 * width))
    x, y = int(rng.integers(0, width - w)), int(rng.integers(0, height - h))
    return t, cls, (x, y, x + w - 1, y + h - 1)


def _det_xml(entry: str, width: int, height: int, objects: list) -> bytes:
    """DET annotation XML (``folder``, ``filename``, ``size``, objects without ``trackid``)."""
    root = ET.Element("annotation")
    folder, _, name = entry.rpartition("/")
    folder = folder.rsplit("/", 1)[-1]  # the synset, as in the released DET XML
    for tag, text in (("folder", folder), ("filename", name)):
        ET.SubElement(root, tag).text = text
    ET.SubElement(ET.SubElement(root, "source"), "database").text = "ILSVRC_2014"
    size = ET.SubElement(root, "size")
    ET.SubElement(size, "width").text, ET.SubElement(size, "height").text = str(width), str(height)
    for wnid, (x1, y1, x2, y2) in objects:
        el = ET.SubElement(root, "object")
        ET.SubElement(el, "name").text = wnid
        bb = ET.SubElement(el, "bndbox")
        for tag, v in (("xmin", x1), ("xmax", x2), ("ymin", y1), ("ymax", y2)):
            ET.SubElement(bb, tag).text = str(int(v))
    ET.indent(root, space="\t")
    return ET.tostring(root, encoding="utf-8") + b"\n"


def _det_objects(rng: np.random.Generator, n: int, width: int, height: int, classes: tuple) -> list:
    """Image ``n``'s objects ``[(wnid, inclusive box)]``: every 4th image none, every 3rd a
    non-VID object beside its VID one, otherwise 1-2 VID objects."""
    if n % 4 == 3:
        return []
    wnids = [NAME_TO_WNID[classes[n % len(classes)]]]
    if n % 3 == 1:
        wnids.append(OTHER_WNIDS[n % 2])
    elif rng.uniform() < 0.5:
        wnids.append(NAME_TO_WNID[classes[int(rng.integers(len(classes)))]])
    out = []
    for wnid in wnids:
        h = int(rng.uniform(0.25, 0.45) * height)
        w = int(min(h * 1.5, 0.7 * width))
        x, y = int(rng.integers(0, width - w)), int(rng.integers(0, height - h))
        out.append((wnid, (x, y, x + w - 1, y + h - 1)))
    return out


def write_det(root: Path, seed: int, images: int, width: int, height: int, classes: tuple) -> list:
    """Write ``images`` DET images + XML under ``root``; returns their entries relative to
    ``Data/DET/train`` (``ILSVRC2013_train/<wnid>/<wnid>_<n>``) in order."""
    from PIL import ImageDraw

    name_of = {NAME_TO_WNID[c]: c for c in classes}
    entries = []
    for n in range(images):
        rng = np.random.default_rng([seed, 3, n])
        w, h = (width, height) if n % 2 == 0 else (height + 16, width - 16)  # two aspects
        objects = _det_objects(rng, n, w, h, classes)
        synset = objects[0][0] if objects else NAME_TO_WNID[classes[n % len(classes)]]
        entry = f"{DET_FOLDER}/{synset}/{synset}_{n + 1}"
        img = clutter(rng, w, h, items=10, contrast=0.6)
        draw = ImageDraw.Draw(img)
        for wnid, box in objects:
            if wnid in name_of:
                draw_object(draw, name_of[wnid], box, bool(rng.uniform() < 0.5), rng.uniform())
            else:
                draw_other(draw, wnid, box)
        image, xml = (at(root, "DET", "train", entry) for at in (image_path, annotation_path))
        for folder in (image.parent, xml.parent):
            folder.mkdir(parents=True, exist_ok=True)
        img.save(image, format="JPEG", quality=92)
        xml.write_bytes(_det_xml(entry, w, h, objects))
        entries.append(entry)
    return entries
