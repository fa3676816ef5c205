"""``VIDMetric``: the ImageNet-VID mAP (overall, FGFA slow/medium/fast, corrupted frames) as an
mmengine metric; the maths is :func:`detection.vid_eval.evaluate_vid` (pure numpy).

Config::

    val_evaluator = dict(type='VIDMetric')          # test_evaluator alike

``process`` takes mmdet 3 data samples: ``pred_instances.bboxes (K, 4)`` (original-image pixels,
i.e. the model tested with ``rescale=True``), ``scores (K,)``, ``labels (K,)`` and the metainfo
``img_path``. Ground truth is *not* taken from the samples' ``gt_instances`` (resized by the test
pipeline, and without the neighbouring frames that motion IoU needs): it is read from the
annotation XML next to each image (``<root>/Data/<VID|DET>/<split>/<entry>.JPEG`` ->
``<root>/Annotations/<VID|DET>/<split>/<entry>.xml``), with the dataset's class list
(``dataset_meta['classes']``; objects of other classes dropped) and the dataset's boxes
(``[xmin, ymin, xmax + 1, ymax + 1]``). Motion IoU (:func:`tsm_apps.data.motion.snippet_motion_iou`)
uses every annotated frame of the snippet, evaluated or not. The corrupted split uses
``<root>/corruptions.json`` when it exists.

Keys (percent): ``mAP``, ``mAP_slow``, ``mAP_medium``, ``mAP_fast``, ``mAP_corrupted`` (``None``
when not applicable), ``mAP_clean``, ``mAP_corrupted_<kind>``, ``AP_<class>`` (``None`` for
classes without GT, left out of the mean), ``n_frames``, ``n_gt``, ``n_gt_<speed>``. No prefix
(``default_prefix = ""``): ``save_best='mAP'`` works as is.
"""

from __future__ import annotations

import json
import os
import os.path as osp
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
from mmdet.registry import METRICS
from mmengine.evaluator import BaseMetric
from mmengine.logging import MMLogger

from tsm_apps.data.motion import WINDOW, read_motion_iou_mat, snippet_motion_iou
from tsm_apps.data.vid_image_sets import read_list
from tsm_apps.data.vid_layout import (
    NAME_TO_WNID,
    WNID_TO_NAME,
    VIDFrame,
    annotation_root,
    edge_box,
    read_frame_xml,
)
from tsm_apps.io import atomic_write_text

from .corruptions import frame_corruption, load_corruptions
from .records import FrameDetections, FrameTruth
from .results import format_table, frame_path
from .vid_eval import evaluate_vid

SOURCES = ("VID", "DET")


def _numpy(x: object) -> np.ndarray:
    return x.detach().cpu().numpy() if hasattr(x, "detach") else np.asarray(x)


def _f32(v: object) -> float:
    """The shortest decimal that reads back as the same float32 (``float32(json) == v``)."""
    return float(np.format_float_positional(np.float32(v), unique=True, trim="-"))


def split_image_path(img_path: str) -> tuple[str, str, str, str]:
    """``(root, source, split, entry)`` of ``<root>/Data/<source>/<split>/<entry>.<ext>``;
    ``ValueError`` for a path outside that layout."""
    p = Path(img_path)
    parts = p.with_suffix("").parts
    for i in range(len(parts) - 4, -1, -1):
        if parts[i] == "Data" and parts[i + 1] in SOURCES:
            root = str(Path(*parts[:i])) if i else "."
            return root, parts[i + 1], parts[i + 2], "/".join(parts[i + 3 :])
    raise ValueError(
        f"{img_path}: not under <root>/Data/VID|DET/<split>/ (ImageNet-VID layout); "
        "VIDMetric reads the annotation XML next to each image"
    )


class AnnotationCache:
    """Ground truth of evaluated frames read from their XML, with motion IoU per snippet
    (computed, or read from FGFA's ``.mat`` with ``motion_iou_file`` and ``video_list``)."""

    def __init__(
        self,
        classes: Sequence[str],
        window: int = WINDOW,
        motion_iou_file: Optional[str] = None,
        video_list: str = "ImageSets/VID_val_videos.txt",
    ) -> None:
        self.window = window
        self.motion_iou_file, self.video_list = motion_iou_file, video_list
        self._mat: dict[str, tuple] = {}  # root -> (per-frame values, {snippet: first index})
        self.labels = {}
        for i, c in enumerate(classes):
            wnid = c if c in WNID_TO_NAME else NAME_TO_WNID.get(c)
            if wnid is None:
                raise ValueError(f"dataset class {c!r} is not a VID class name or WordNet id")
            self.labels[wnid] = i
        self._corruptions: dict[str, Optional[dict]] = {}

    def _snippet(self, root: str, source: str, split: str, snippet: str, evaluated: set) -> tuple:
        """``(position by frame name, frames, motion IoU)`` of every annotated frame of a snippet
        (a DET image: itself). A bad XML of a frame that is not evaluated counts as a frame
        without objects (logged); one of an evaluated frame raises ``ValueError``."""
        folder = osp.join(annotation_root(root, source, split), snippet)
        if source == "DET":
            folder, names = osp.dirname(folder), [osp.basename(snippet)]
        else:
            try:
                names = sorted(f[:-4] for f in os.listdir(folder) if f.endswith(".xml"))
            except OSError as e:
                raise ValueError(f"{folder}: cannot list annotations ({e.strerror})") from None
        frames = []
        for n in names:
            path = osp.join(folder, n + ".xml")
            try:
                frames.append(read_frame_xml(path, det=source == "DET"))
            except (OSError, ValueError) as e:
                msg = str(e) if isinstance(e, ValueError) else f"{path}: unreadable ({e})"
                if n in evaluated:
                    raise ValueError(msg) from None
                MMLogger.get_current_instance().warning(f"VIDMetric: motion IoU ignores {msg}")
                frames.append(VIDFrame(snippet, n, 1, 1))
        return {n: i for i, n in enumerate(names)}, frames, snippet_motion_iou(frames, self.window)

    def truths(self, img_paths: Sequence[str]) -> dict[str, FrameTruth]:
        """``{img_path: FrameTruth}`` (boxes as the dataset: inclusive XML box + 1)."""
        by_snippet: dict[tuple, list[tuple[str, str]]] = {}
        for path in img_paths:
            root, source, split, entry = split_image_path(path)
            snippet, _, frame = (
                entry.rpartition("/") if source == "VID" else (entry, "", osp.basename(entry))
            )
            by_snippet.setdefault((root, source, split, snippet), []).append((path, frame))
        out = {}
        for (root, source, split, snippet), items in by_snippet.items():
            pos, frames, motion = self._snippet(root, source, split, snippet, {f for _, f in items})
            if root not in self._corruptions:
                self._corruptions[root] = load_corruptions(root)
            for path, frame in items:
                if frame not in pos:
                    raise ValueError(
                        f"{path}: no annotation {frame}.xml in "
                        f"{osp.join(annotation_root(root, source, split), snippet)}"
                    )
                t = pos[frame]
                if self.motion_iou_file and source == "VID":
                    motion[t] = self._mat_values(root, snippet, frame, len(frames[t].objects))
                keep = [j for j, o in enumerate(frames[t].objects) if o.name in self.labels]
                objs = [frames[t].objects[j] for j in keep]
                img_id = (
                    f"{split}/{snippet}/{frame}" if source == "VID" else f"DET/{split}/{snippet}"
                )
                out[path] = FrameTruth(
                    np.array([edge_box(o.box) for o in objs], np.float64).reshape(-1, 4),
                    np.array([self.labels[o.name] for o in objs], np.int64),
                    motion_iou=np.array([motion[t][j] for j in keep], np.float64),
                    corruption=frame_corruption(self._corruptions[root], img_id),
                )
        return out

    def _mat_values(self, root: str, snippet: str, frame: str, n_objects: int) -> list:
        """Motion IoU of a val frame's objects from FGFA's ``.mat`` (XML object order)."""
        if root not in self._mat:
            path = (
                self.motion_iou_file
                if osp.isabs(self.motion_iou_file)
                else osp.join(root, self.motion_iou_file)
            )
            lst = self.video_list if osp.isabs(self.video_list) else osp.join(root, self.video_list)
            starts = {}
            for entry, start, *_ in read_list(lst):
                starts[entry.split("/", 1)[1] if entry.startswith("val/") else entry] = start - 1
            self._mat[root] = (read_motion_iou_mat(path), starts, path)
        values, starts, path = self._mat[root]
        if snippet not in starts:
            raise ValueError(
                f"{snippet} is not in the video list {self.video_list} that orders {path}"
            )
        i = starts[snippet] + int(frame)
        if i < len(values) and len(values[i]) == 0 and n_objects == 1:
            return [0.0]  # an empty (1, 0) cell: FGFA's reader makes it one value, 0
        if i >= len(values) or len(values[i]) != n_objects:
            got = "no cell" if i >= len(values) else f"{len(values[i])} values"
            raise ValueError(
                f"{path}: cell {i + 1} ({snippet}/{frame}) has {got}, but the "
                f"frame's XML has {n_objects} objects"
            )
        return [float(v) for v in values[i]]


@METRICS.register_module()
class VIDMetric(BaseMetric):
    """ImageNet-VID mAP with the motion and corruption splits (see the module docstring).

    Args:
        motion_window: frames on each side of ``t`` for motion IoU (FGFA: 10).
        motion_iou_file: FGFA's ``imagenet_vid_groundtruth_motion_iou.mat`` (absolute, or
            relative to the data root): motion IoU read from it instead of computed; one cell
            per val frame in the order of ``video_list``.
        video_list: the MSRA ``VID_val_videos.txt`` (absolute or relative to the data root)
            that orders the cells: ``val/<snippet> <first global frame id> 0 <frames>``.
        collect_device, prefix: as mmengine ``BaseMetric``.
    """

    default_prefix: Optional[str] = ""  # no prefix, and no mmengine warning about it

    def __init__(
        self,
        motion_window: int = WINDOW,
        motion_iou_file: Optional[str] = None,
        video_list: str = "ImageSets/VID_val_videos.txt",
        collect_device: str = "cpu",
        prefix: Optional[str] = None,
    ) -> None:
        super().__init__(collect_device=collect_device, prefix=prefix)
        self.motion_window = int(motion_window)
        self.motion_iou_file, self.video_list = motion_iou_file, video_list

    def process(self, data_batch: object, data_samples: Sequence[dict]) -> None:
        """Keep each sample's ``img_path`` and predicted boxes, scores, labels (numpy)."""
        for s in data_samples:
            s = s.to_dict() if hasattr(s, "to_dict") else s
            if "img_path" not in s or "pred_instances" not in s:
                raise ValueError(
                    f"VIDMetric needs data samples with 'img_path' metainfo and "
                    f"'pred_instances'; got keys {sorted(s)}"
                )
            pred = s["pred_instances"]
            self.results.append(
                {
                    "img_path": str(s["img_path"]),
                    "bboxes": _numpy(pred["bboxes"]).reshape(-1, 4),
                    "scores": _numpy(pred["scores"]).reshape(-1),
                    "labels": _numpy(pred["labels"]).reshape(-1),
                }
            )

    def compute_metrics(self, results: list) -> dict:
        """:func:`evaluate_vid` over the processed frames; logs the Markdown table."""
        classes = tuple((self.dataset_meta or {}).get("classes") or ())
        if not classes:
            raise ValueError(
                "VIDMetric needs dataset_meta['classes'] (set by the Runner from "
                "the dataset's metainfo)"
            )
        truths = AnnotationCache(
            classes, self.motion_window, self.motion_iou_file, self.video_list
        ).truths([r["img_path"] for r in results])
        dets = {
            r["img_path"]: FrameDetections(r["bboxes"], r["scores"], r["labels"]) for r in results
        }
        metrics = evaluate_vid(dets, truths, classes)
        MMLogger.get_current_instance().info("ImageNet-VID evaluation:\n" + format_table(metrics))
        return metrics


@METRICS.register_module()
class DetectionsDump(BaseMetric):
    """Writes the per-frame detections of a test run as JSON (``{"classes", "frames":
    [{"img_path", "boxes", "scores", "labels"}]}``, boxes in original-image pixels) and reports
    no numbers; ``tsm detect test`` adds it beside :class:`VIDMetric`. Boxes and scores are the
    float32 values the metric saw, written exactly (shortest decimal that reads back as the
    same float32), so re-scoring the file reproduces ``metrics.json``. ``img_path`` is the
    frame's :func:`~detection.results.frame_path` (absolute: a relative ``data_root`` resolved
    against the folder the test ran in)."""

    default_prefix = None

    def __init__(self, out_file: str, collect_device: str = "cpu") -> None:
        super().__init__(collect_device=collect_device)
        self.out_file = Path(out_file)

    def process(self, data_batch, data_samples) -> None:
        for s in data_samples:
            p = s["pred_instances"] if isinstance(s, dict) else s.pred_instances
            meta = s if isinstance(s, dict) else s.metainfo
            self.results.append(
                {
                    "img_path": frame_path(str(meta.get("img_path", ""))),
                    "boxes": [[_f32(v) for v in b] for b in _numpy(p["bboxes"]).reshape(-1, 4)],
                    "scores": [_f32(v) for v in _numpy(p["scores"]).reshape(-1)],
                    "labels": p["labels"].cpu().tolist(),
                }
            )

    def compute_metrics(self, results: list) -> dict:
        classes = list((self.dataset_meta or {}).get("classes") or [])
        self.out_file.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(self.out_file, json.dumps({"classes": classes, "frames": results}) + "\n")
        return {}
