"""Evaluation clips with ground truth for dissection jobs.

A data set is a list file in the official TSM format (``path num_frames label`` per line, paths
relative to the list's folder) or a folder holding ``val.txt``; ground truth, when present, is
``annotations.json`` beside it (the synthetic temporal set's format: per video, per-frame
``boxes`` ``[x1, y1, x2, y2]`` in pixels of the stored frames and ``active`` flags).

Each clip is sampled like TSN's test mode (the centre frame of each of ``T`` equal segments),
decoded with :func:`tsm_apps.data.video.read_video_frames`, resized (shorter side) and
centre-cropped, then normalised; boxes follow the same resize and crop.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from tsm_apps.data.lists import read_tsm_list
from tsm_apps.data.sampling import sample_test

from .storage import clip_id, read_json

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
LIST_NAMES = ("val.txt", "test.txt")


@dataclass
class ClipEntry:
    """One line of a list file, with its ground truth when known (frames of the whole video)."""
    id: str
    path: str
    num_frames: int
    label: int
    boxes: Optional[np.ndarray] = None     # (F, 4), NaN rows where no box
    active: Optional[np.ndarray] = None    # (F,) bool


@dataclass
class Clip:
    """A sampled, preprocessed clip. ``input``: ``(T, 3, S, S)`` float; ``frames``: the same
    pixels as uint8 ``(T, S, S, 3)`` for display; ``boxes`` ``(T, 4)`` in input pixels."""
    entry: ClipEntry
    indices: np.ndarray
    input: Tensor
    frames: np.ndarray
    boxes: Optional[np.ndarray]
    active: Optional[np.ndarray]


def resolve_data(data: str) -> Tuple[Path, Optional[Path]]:
    """``(list file, annotations.json or None)`` for a list file or a data folder."""
    p = Path(data)
    if p.is_dir():
        lists = [p / n for n in LIST_NAMES if (p / n).is_file()]
        if not lists:
            raise FileNotFoundError(f"{p} is a folder without any of {LIST_NAMES}")
        p = lists[0]
    elif not p.is_file():
        raise FileNotFoundError(f"data not found: {p} (expected a list file or a folder)")
    ann = p.parent / "annotations.json"
    return p, (ann if ann.is_file() else None)


def read_list(list_file: Path) -> List[Tuple[str, int, int]]:
    """Parse ``path num_frames label`` lines (paths as written, relative to the list's folder);
    a bad line raises ValueError naming file:line (:func:`tsm_apps.data.lists.read_tsm_list`)."""
    return [(str(r.path), r.num_frames, r.label)
            for r in read_tsm_list(list_file, root=".", allow_empty=True)]


def _ground_truth(ann: dict, path: str) -> tuple:
    v = ann.get("videos", {}).get(path)
    if v is None:
        return None, None
    boxes = np.array([[np.nan] * 4 if b is None else b for b in v.get("boxes", [])], np.float64)
    active = np.asarray(v["active"], bool) if "active" in v else None
    return (boxes if boxes.size else None), active


def load_entries(data: str, limit: Optional[int] = None) -> List[ClipEntry]:
    """The clips of a data set (the first ``limit`` of them), with ground truth when present."""
    list_file, ann_file = resolve_data(data)
    ann = read_json(ann_file) if ann_file else {}
    out = []
    for path, n, label in read_list(list_file)[:limit]:
        boxes, active = _ground_truth(ann, path)
        out.append(ClipEntry(clip_id(path), str(list_file.parent / path), n, label, boxes, active))
    return out


def centre_indices(num_frames: int, num_segments: int) -> np.ndarray:
    """TSN test sampling: the centre frame of each of ``num_segments`` equal segments."""
    return sample_test(num_frames, num_segments)


def _resize_crop(frames: np.ndarray, size: Optional[int]) -> Tuple[Tensor, float, Tuple[int, int]]:
    """uint8 ``(T, H, W, 3)`` -> float ``(T, 3, S, S)`` in [0, 255], scale and crop offset."""
    x = torch.from_numpy(np.ascontiguousarray(frames)).permute(0, 3, 1, 2).float()
    h, w = x.shape[-2:]
    if size is None:
        return x, 1.0, (0, 0)
    scale = size / min(h, w)
    if scale != 1.0:
        x = F.interpolate(x, size=(round(h * scale), round(w * scale)), mode="bilinear",
                          align_corners=False, antialias=scale < 1).clamp(0, 255)
    top, left = (x.shape[-2] - size) // 2, (x.shape[-1] - size) // 2
    return x[..., top:top + size, left:left + size], scale, (left, top)


def _per_frame(entry: ClipEntry, values: np.ndarray, idx: np.ndarray, what: str) -> np.ndarray:
    if idx.max() >= len(values):
        raise ValueError(f"annotations of {entry.path}: {len(values)} {what} entries but frame "
                         f"{int(idx.max())} is sampled (the list says {entry.num_frames} frames)")
    return values[idx]


def load_clip(entry: ClipEntry, num_segments: int, size: Optional[int] = None,
              mean: Sequence[float] = IMAGENET_MEAN, std: Sequence[float] = IMAGENET_STD) -> Clip:
    """Decode and preprocess one clip (raises ``VideoDecodeError`` for unreadable videos)."""
    from tsm_apps.data.video import read_video_frames

    idx = centre_indices(entry.num_frames, num_segments)
    raw = read_video_frames(entry.path, idx)
    x, scale, (left, top) = _resize_crop(raw, size)
    frames = x.round().byte().permute(0, 2, 3, 1).numpy()
    m = torch.tensor(mean).view(1, 3, 1, 1)
    s = torch.tensor(std).view(1, 3, 1, 1)
    inp = (x / 255.0 - m) / s
    boxes = active = None
    if entry.boxes is not None:
        boxes = _per_frame(entry, entry.boxes, idx, "boxes") * scale
        boxes = boxes - np.array([left, top, left, top], np.float64)
    if entry.active is not None:
        active = _per_frame(entry, entry.active, idx, "active")
    return Clip(entry, idx, inp, frames, boxes, active)
