"""Which frames an :class:`~detection.vid_dataset.ImageNetVIDDataset` holds, and in what order:
the ImageSets lists it reads, its key frames, and key frames first.

Accepted ``ann_file`` lists (one format per file; an entry may start with its split,
``train/``/``val/``, and is then relative to ``Data/VID`` as FGFA reads it, otherwise the split
is ``split=``, or ``'val'``/``'test'`` for a list whose name starts with it, else ``'train'``):

* frame lines ``<snippet>/%06d <n>`` (devkit ``val.txt``, ``train.txt``; FGFA's
  ``VID_val_frames.txt`` ``val/ILSVRC2015_val_00000000/000000 1``): the listed frames;
* snippet lines ``<snippet> 1`` (devkit ``train_<k>.txt``,
  ``ILSVRC2015_VID_train_0000/ILSVRC2015_train_00000000 1``): every frame of the snippet;
* MSRA four-column lines ``<split>/<snippet> <n> <frame> <frames>``: in training
  (``VID_train_15frames.txt``, ``train/ILSVRC2015_VID_train_0000/ILSVRC2015_train_00000000 1 10
  300``) the 0-based ``frame`` is a key frame of the snippet (its other frames load as clip
  context); in ``test_mode`` (``VID_val_videos.txt``, ``val/ILSVRC2015_val_00000000 1 0 464``)
  the line is the whole ``frames``-long video.

``det_ann_file`` adds ImageNet DET images as one-frame videos: MSRA's
``DET_train_30classes.txt`` (``train/ILSVRC2013_train/n01503061/n01503061_5 1``, relative to
``Data/DET``) or lines ``<image> <n>`` relative to ``Data/DET/train`` (lines with ``n < 0``,
DET's negatives, skipped); annotations ``Annotations/DET/<split>/<image>.xml``.

Key frames: the listed key frames of an MSRA list, else with ``frames_per_video=k`` ``k`` evenly
spaced key frames per video (:func:`key_positions`); DET images are key frames. The dataset's
entries are the key frames first, then the other frames of the listed videos
(:func:`key_frames_first`).
"""

from __future__ import annotations

import os
import os.path as osp
from typing import Optional

from tsm_apps.data.vid_image_sets import read_list
from tsm_apps.data.vid_layout import annotation_root

SPLITS = ("train", "val", "test")


def split_prefix(entry: str, default: str) -> tuple[str, str]:
    """``("train", rest)`` of ``"train/rest"`` (MSRA lists, relative to ``Data/VID|DET``);
    ``(default, entry)`` for an entry without a split (devkit lists)."""
    head, _, rest = entry.partition("/")
    return (head, rest) if head in SPLITS and rest else (default, entry)


def list_split(ann_file: str, split: Optional[str]) -> str:
    """The split of a list's entries without one: ``split``, else ``'val'``/``'test'`` for a
    list whose file name starts with it, else ``'train'``."""
    name = osp.basename(ann_file)
    return split or next((sp for sp in ("val", "test") if name.startswith(sp)), "train")


def vid_snippets(ann_file: str, split: str, test_mode: bool) -> dict[tuple[str, str], dict]:
    """``{(split, snippet): {"frames": listed frame ids or None (all), "keys": key frame ids
    or None (by frames_per_video), "length": frames or None (count the XML files)}}``."""
    snippets: dict[tuple[str, str], dict] = {}
    for line in read_list(ann_file):
        entry_split, entry = split_prefix(line[0], split)
        head, _, tail = entry.rpartition("/")
        if len(line) == 4:  # MSRA: a key frame (training) or a whole video (test)
            spec = snippets.setdefault(
                (entry_split, entry), {"frames": None, "keys": [], "length": line[3]}
            )
            if not test_mode:
                spec["keys"].append(line[2])
        elif head and tail.isdigit() and len(tail) == 6:
            spec = snippets.setdefault(
                (entry_split, head), {"frames": [], "keys": None, "length": None}
            )
            if spec["frames"] is not None:
                spec["frames"].append(int(tail))
        else:
            snippets[(entry_split, entry)] = {"frames": None, "keys": None, "length": None}
    for spec in snippets.values():
        spec["keys"] = spec["keys"] or None  # test mode: every frame
    return snippets


def snippet_length(data_root: str, ann_file: str, split: str, snippet: str) -> int:
    """Frames of a VID snippet on disk (its XML files); ValueError naming the list and the
    folder when the snippet has none."""
    folder = osp.join(annotation_root(data_root, "VID", split), snippet)
    try:
        return sum(1 for f in os.listdir(folder) if f.endswith(".xml"))
    except OSError as e:
        raise ValueError(
            f"{ann_file}: snippet {snippet!r} has no annotation folder {folder} ({e.strerror})"
        ) from None


def det_entries(data_root: str, det_ann_file: str) -> list[tuple[str, str]]:
    """``(split, image)`` of each positive line of a DET list (relative to ``data_root``
    unless absolute)."""
    path = det_ann_file if osp.isabs(det_ann_file) else osp.join(data_root, det_ann_file)
    return [split_prefix(e, "train") for e, n, *_ in read_list(path) if n >= 0]


def key_positions(n: int, k: Optional[int]) -> list[int]:
    """Positions of ``k`` evenly spaced key frames among ``n`` (segment centres, FGFA's
    ``floor(n*(2i+1)/(2k))``); all if ``k`` is None or ``n <= k``."""
    if k is None or n <= k:
        return list(range(n))
    return sorted({int((i + 0.5) * n / k) for i in range(k)})


def key_frames_first(
    videos: list[tuple[list[dict], Optional[set]]],
    frames_per_video: Optional[int],
    filter_empty: bool,
) -> tuple[list[dict], dict[str, list[int]], int]:
    """``(entries, video_index, number of key frames)`` of ``videos`` (``(frame infos in frame
    order, explicit key frame ids or None)`` each): key frames first, then the other frames;
    each info gets ``key_frame`` (``filter_empty``: frames without instances are not key
    frames); ``video_index`` maps each video to the indices of its frames in frame order."""
    keys, rest = [], []
    for frames, explicit in videos:
        pos = (
            set(key_positions(len(frames), frames_per_video))
            if explicit is None
            else {p for p, info in enumerate(frames) if info["frame_id"] in explicit}
        )
        for p, info in enumerate(frames):
            info["key_frame"] = p in pos and not (filter_empty and not info["instances"])
            (keys if info["key_frame"] else rest).append(info)
    data_list = keys + rest
    index: dict[str, list[tuple[int, int]]] = {}
    for i, info in enumerate(data_list):
        index.setdefault(info["video"], []).append((info["frame_id"], i))
    video_index = {v: [i for _, i in sorted(fr)] for v, fr in index.items()}
    return data_list, video_index, len(keys)
