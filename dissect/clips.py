"""Evaluation clips with ground truth for dissection jobs.

A data set is any form :func:`tsm_apps.data.sources.find_sources` reads: a video, a folder of
videos or frame folders (recursive), a list file (``path [num_frames [label]]``), a folder
holding ``val.txt``, or a Something-Something-v2 JSON. Labels may be absent (predictions only).
Ground truth, when present, is ``annotations.json`` beside the list file (the synthetic
temporal set's format: per video, per-frame ``boxes`` ``[x1, y1, x2, y2]`` in pixels of the
stored frames and ``active`` flags).

Each clip is sampled like TSN's test mode (the centre frame of each of ``T`` equal segments;
with ``clips=K`` per video, clip ``k`` takes offset ``(k + 0.5) / K`` in every segment),
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

from tsm_apps.data.sampling import sample_multi_clip, sample_test
from tsm_apps.data.sources import find_sources, resolve_list

from .storage import clip_id, read_json

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


@dataclass
class ClipEntry:
    """One clip of a video, with its ground truth when known (frames of the whole video).

    ``label`` is None for unlabelled data; clip ``clip`` of ``num_clips`` per video."""
    id: str
    path: str
    num_frames: int
    label: Optional[int]
    boxes: Optional[np.ndarray] = None     # (F, 4), NaN rows where no box
    active: Optional[np.ndarray] = None    # (F,) bool
    clip: int = 0
    num_clips: int = 1
    frame_template: Optional[str] = None
    start_index: int = 1
    error: Optional[str] = None            # the video could not be read when listed
    name: Optional[str] = None             # the video's name in the data (its flow folder's)


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
    """``(input path, annotations.json or None)``: a folder holding ``val.txt``/``test.txt``
    resolves to that list; ground truth is ``annotations.json`` beside a list file."""
    p = resolve_list(data)
    ann = p.parent / "annotations.json"
    return p, (ann if p.suffix == ".txt" and ann.is_file() else None)


def _ground_truth(ann: dict, path: str) -> tuple:
    v = ann.get("videos", {}).get(path)
    if v is None:
        return None, None
    boxes = np.array([[np.nan] * 4 if b is None else b for b in v.get("boxes", [])], np.float64)
    active = np.asarray(v["active"], bool) if "active" in v else None
    return (boxes if boxes.size else None), active


def load_entries(data: str, limit: Optional[int] = None, clips: int = 1) -> List[ClipEntry]:
    """The clips of a data set (``clips`` per video, the first ``limit`` videos), with ground
    truth when present. Ids: :func:`clip_id` of the video's name, ``__c<k>`` appended when a
    video gives several clips."""
    if clips < 1:
        raise ValueError(f"clips per video must be >= 1, got {clips}")
    ann_file = resolve_data(data)[1]
    ann = read_json(ann_file) if ann_file else {}
    out = []
    for s in find_sources(data)[:limit]:
        boxes, active = _ground_truth(ann, s.name)
        for k in range(clips):
            cid = clip_id(s.name) + (f"__c{k}" if clips > 1 else "")
            out.append(ClipEntry(cid, str(s.path), s.num_frames, s.label, boxes, active, k,
                                 clips, s.frame_template, s.start_index, s.error, s.name))
    return out


def centre_indices(num_frames: int, num_segments: int, clip: int = 0,
                   num_clips: int = 1) -> np.ndarray:
    """TSN test sampling: the centre frame of each of ``num_segments`` equal segments (clip
    ``clip`` of ``num_clips``: :func:`tsm_apps.data.sampling.sample_multi_clip`)."""
    if num_clips == 1:
        return sample_test(num_frames, num_segments)
    all_idx = sample_multi_clip(num_frames, num_segments, num_clips)
    return all_idx[clip * num_segments:(clip + 1) * num_segments]


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
    from tsm_apps.data.video import VideoDecodeError, read_video_frames

    if entry.error is not None:
        raise VideoDecodeError(entry.path, entry.error)

    idx = centre_indices(entry.num_frames, num_segments, entry.clip, entry.num_clips)
    raw = read_video_frames(entry.path, idx, entry.frame_template, entry.start_index)
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
