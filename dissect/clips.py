"""Evaluation clips with ground truth for dissection jobs.

A data set is any form :func:`tsm_apps.data.sources.find_sources` reads: a video, a folder of
videos or frame folders (recursive), a list file (``path [num_frames [label]]``), a folder
holding ``val.txt``, or a Something-Something-v2 JSON. Labels may be absent (predictions only).
Ground truth, when present, is ``annotations.json`` beside the list file (the synthetic
temporal set's format: per video, per-frame ``boxes`` ``[x1, y1, x2, y2]`` in pixels of the
stored frames and ``active`` flags).

Each clip goes through the one clip pipeline (:mod:`tsm_apps.data.pipeline`) under the
checkpoint's test protocol (:mod:`tsm_apps.data.protocol`): the protocol's frame sampling (clip
``k`` of ``K`` per video), its resize and its centre view (or the whole frame with
``view='frame'``) -- exactly the pixels ``tsm test`` scores. Boxes follow the same resize and
crop.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Tuple

import numpy as np
from torch import Tensor

from tsm_apps.data.pipeline import ClipViews, clip_indices, views_from_frames
from tsm_apps.data.protocol import TestProtocol
from tsm_apps.data.record import VideoSource
from tsm_apps.data.sources import find_sources, resolve_list

from .storage import clip_id, read_json


@dataclass
class ClipEntry:
    """Clip ``clip`` of ``num_clips`` of ``video``, with the video's ground truth when known
    (``boxes`` ``(F, 4)`` with NaN rows where there is no box, ``active`` ``(F,)`` bool: per
    frame of the whole video)."""

    id: str
    video: VideoSource
    boxes: Optional[np.ndarray] = None
    active: Optional[np.ndarray] = None
    clip: int = 0
    num_clips: int = 1

    @property
    def path(self) -> str:
        return str(self.video.path)

    @property
    def num_frames(self) -> int:
        return self.video.num_frames

    @property
    def label(self) -> Optional[int]:
        return self.video.label


@dataclass
class Clip:
    """A sampled, preprocessed clip. ``input``: ``(T, 3, S, S)`` float; ``frames``: the same
    pixels as uint8 ``(T, S, S, 3)`` for display; ``boxes`` ``(T, 4)`` in input pixels;
    ``views``: the pipeline's record (``views.boxes[0]``: the view in the frame's pixels)."""

    entry: ClipEntry
    indices: np.ndarray
    input: Tensor
    frames: np.ndarray
    boxes: Optional[np.ndarray]
    active: Optional[np.ndarray]
    views: Optional[ClipViews] = None


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
            out.append(ClipEntry(cid, s, boxes, active, k, clips))
    return out


def dissection_protocol(protocol: TestProtocol) -> TestProtocol:
    """The view dissection explains: the protocol's sampling and resize, one view per clip --
    its centre crop (or the whole frame with ``view='frame'``)."""
    return protocol.with_options(crops=1)


def clip_frames(entry: ClipEntry, num_segments: int, protocol: TestProtocol) -> np.ndarray:
    """``(T,)`` frames of clip ``entry.clip`` of ``entry.num_clips`` under ``protocol``."""
    proto = protocol.with_options(clips=entry.num_clips)
    if proto.sampling == "twice" and entry.num_clips != 2:
        proto = proto.with_options(sampling="multi" if entry.num_clips > 1 else "tsn")
    return clip_indices(proto, entry.num_frames, num_segments)[entry.clip]


def _per_frame(entry: ClipEntry, values: np.ndarray, idx: np.ndarray, what: str) -> np.ndarray:
    if idx.max() >= len(values):
        raise ValueError(
            f"annotations of {entry.path}: {len(values)} {what} entries but frame "
            f"{int(idx.max())} is sampled (the list says {entry.num_frames} frames)"
        )
    return values[idx]


def load_clip(entry: ClipEntry, num_segments: int, protocol: TestProtocol) -> Clip:
    """Decode and preprocess one clip under ``protocol``'s dissection view (raises
    ``VideoDecodeError`` for unreadable videos)."""
    from tsm_apps.data.decoder import VideoDecodeError
    from tsm_apps.data.video import read_video_frames

    v = entry.video
    if v.error is not None:
        raise VideoDecodeError(v.path, v.error)
    proto = dissection_protocol(protocol)
    idx = clip_frames(entry, num_segments, protocol)
    views = views_from_frames(
        lambda i: read_video_frames(v.path, i, v.frame_template, v.start_index), idx[None], proto
    )
    frames = views.frames[0]
    boxes = active = None
    if entry.boxes is not None:
        boxes = views.to_input(_per_frame(entry, entry.boxes, idx, "boxes"))
    if entry.active is not None:
        active = _per_frame(entry, entry.active, idx, "active")
    return Clip(entry, idx, views.input[0], frames, boxes, active, views)
