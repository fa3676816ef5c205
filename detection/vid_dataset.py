"""``ImageNetVIDDataset``: the ILSVRC2015 VID layout (and DET images as one-frame videos) as
frame-level mmdet data, with the MSRA/FGFA key-frame sampling for training.

Config (paths relative to ``data_root``)::

    dict(type='ImageNetVIDDataset', data_root='data/ILSVRC2015/',
         ann_file='ImageSets/VID_train_15frames.txt',   # lists: see detection.vid_index
         det_ann_file='ImageSets/DET_train_30classes.txt',  # optional DET images
         frames_per_video=None,                    # k evenly spaced key frames per snippet
         metainfo=dict(classes=('car', 'dog')),    # default: the 30 VID classes
         clip_boxes=None,                          # default: clip in training, not in test_mode
         on_bad_frame='raise', pipeline=[...])

The list formats ``ann_file`` and ``det_ann_file`` accept (devkit, FGFA/MSRA, DET) are described
in :mod:`detection.vid_index`. Objects of classes outside ``metainfo['classes']`` (names or WordNet
ids; the 170 non-VID DET classes always) are dropped.

Each entry: ``img_path``, ``img_id`` (``"<split>/<snippet>/%06d"``; ``"DET/train/<image>"``),
``height``, ``width``, ``instances`` (``bbox`` float ``[xmin, ymin, xmax + 1, ymax + 1]``: pixel
edges, the devkit's ``+ 1`` widths; ``bbox_label``; ``ignore_flag`` 0; ``instance_id`` = trackid),
``video`` (snippet, or ``"DET/<image>"``), ``frame_id`` (0-based), ``video_length`` (frames of the
snippet on disk), ``key_frame``, ``corruption`` (the synthetic corruption of the frame from
``<data_root>/corruptions.json``, else ``None``) and ``clip_key`` (read with a
:class:`~detection.clips.KeyFrameIndex`: the key frame of its training clip).

Key frames and clips: the listed key frames of an MSRA list, else with ``frames_per_video=k``
``k`` evenly spaced key frames per video (:func:`detection.vid_index.key_positions`; all frames
when shorter); DET images are key frames; ``filter_cfg=dict(filter_empty_gt=True)`` (training)
takes frames without objects out of the key frames. ``len(dataset)`` is the number of key
frames and indices ``[0, len)`` are the key frames, so any mmengine sampler draws key frames
only; the other frames of the listed videos follow at indices ``>= len`` and are loaded like any
other (``dataset[i]``). ``video_index`` maps each video to the indices of all its frames in frame
order (what :class:`detection.clips.ClipBatchSampler` turns into clips of consecutive frames).
``indices=`` (mmengine subsets) is not supported: it would break that order, and an mmengine
``ConcatDataset`` only reaches the key frames: add DET images with ``det_ann_file`` instead.

Boxes on or past the image border (the ILSVRC XML has ``xmax = width``, ``ymax = height`` and
beyond): with ``clip_boxes`` (default in training, i.e. not ``test_mode``) they are clipped as
FGFA's ``imagenet_vid.py`` does, ``xmin, ymin >= 0`` and ``xmax <= width - 1``, ``ymax <=
height - 1`` (inclusive), and an object with nothing left inside the image is dropped (counted
in ``dropped_objects``); in ``test_mode`` they are kept as given, as FGFA's evaluation reads
them. Either way the frame is kept.

Bad frames (unreadable or malformed XML, an inverted box, a missing image):
``on_bad_frame='raise'`` raises ``ValueError`` naming the file; ``'skip'`` drops the frame and
logs how many were skipped (``skipped_frames`` lists them).
"""

from __future__ import annotations

import colorsys
import os.path as osp
from typing import Optional, Sequence

from mmdet.datasets import BaseDetDataset
from mmdet.registry import DATASETS
from mmengine.dataset.base_dataset import force_full_init
from mmengine.logging import print_log

from tsm_apps.data.vid_layout import (
    NAME_TO_WNID,
    VID_CLASSES,
    WNID_TO_NAME,
    VIDFrame,
    annotation_path,
    edge_box,
    image_path,
    read_frame_xml,
)
from tsm_apps.progress import progress_bar

from .clips import KeyFrameIndex, clip_for_key
from .corruptions import frame_corruption, load_corruptions
from .vid_index import det_entries, key_frames_first, list_split, snippet_length, vid_snippets

BAD_FRAME_MODES = ("raise", "skip")


def clip_box(box: Sequence[int], width: int, height: int) -> Optional[list[float]]:
    """FGFA's training clip of an inclusive XML box ``(xmin, ymin, xmax, ymax)`` to a
    ``width`` x ``height`` image, as edge coordinates ``[x1, y1, x2 + 1, y2 + 1]``; ``None``
    when no pixel of the box is inside the image."""
    x1, y1 = max(box[0], 0), max(box[1], 0)
    x2, y2 = min(box[2], width - 1), min(box[3], height - 1)
    if x1 > x2 or y1 > y2:
        return None
    return edge_box((x1, y1, x2, y2))


def _palette(n: int) -> list[tuple[int, int, int]]:
    return [tuple(int(255 * c) for c in colorsys.hsv_to_rgb(i / n, 0.75, 0.95)) for i in range(n)]


@DATASETS.register_module()
class ImageNetVIDDataset(BaseDetDataset):
    """ImageNet VID (+ DET) frames for mmdet; see the module docstring for the config."""

    METAINFO = {"classes": tuple(name for _, name in VID_CLASSES), "palette": _palette(30)}

    def __init__(
        self,
        *args,
        split: Optional[str] = None,
        det_ann_file: Optional[str] = None,
        frames_per_video: Optional[int] = None,
        on_bad_frame: str = "raise",
        clip_boxes: Optional[bool] = None,
        **kwargs,
    ) -> None:
        if on_bad_frame not in BAD_FRAME_MODES:
            raise ValueError(f"on_bad_frame must be one of {BAD_FRAME_MODES}, got {on_bad_frame!r}")
        if frames_per_video is not None and int(frames_per_video) < 1:
            raise ValueError(f"frames_per_video must be >= 1 or None, got {frames_per_video}")
        if kwargs.get("indices") is not None:
            raise ValueError(
                "ImageNetVIDDataset does not support indices= (key frames come "
                "first, see detection/vid_dataset.py)"
            )
        self.split, self.det_ann_file = split, det_ann_file
        self.frames_per_video = None if frames_per_video is None else int(frames_per_video)
        self.on_bad_frame = on_bad_frame
        self.clip_boxes = (
            (not kwargs.get("test_mode", False)) if clip_boxes is None else bool(clip_boxes)
        )
        self.skipped_frames: list[str] = []
        self.dropped_objects: list[str] = []
        self.video_index: dict[str, list[int]] = {}
        self._num_keys = 0
        super().__init__(*args, **kwargs)

    # ------------------------------------------------------------------ classes and paths
    def _label_of(self) -> dict[str, int]:
        """WordNet id -> label index of ``metainfo['classes']`` (names or WordNet ids)."""
        out = {}
        for i, c in enumerate(self.metainfo["classes"]):
            wnid = c if c in WNID_TO_NAME else NAME_TO_WNID.get(c)
            if wnid is None:
                raise ValueError(
                    f"metainfo class {c!r} is neither a VID class name nor a VID "
                    f"WordNet id (e.g. 'car' / 'n02958343')"
                )
            out[wnid] = i
        return out

    def _bad(self, msg: str) -> None:
        if self.on_bad_frame == "raise":
            raise ValueError(msg)
        self.skipped_frames.append(msg)

    def _instances(self, frame: VIDFrame, xml: str, labels: dict[str, int]) -> list[dict]:
        """mmdet instances of a frame's objects of ``labels``' classes; boxes clipped to the
        image when ``clip_boxes`` (objects with nothing inside dropped), else as given."""
        out = []
        for j, o in enumerate(frame.objects):
            if o.name not in labels:
                continue
            box = clip_box(o.box, frame.width, frame.height) if self.clip_boxes else edge_box(o.box)
            if box is None:
                self.dropped_objects.append(
                    f"{xml}: object {j} {o.box} outside the {frame.width}x{frame.height} image"
                )
                continue
            out.append(
                {
                    "bbox": box,
                    "bbox_label": labels[o.name],
                    "ignore_flag": 0,
                    "instance_id": o.trackid,
                }
            )
        return out

    # ------------------------------------------------------------------ parsing
    def _frame_info(
        self,
        source: str,
        split: str,
        entry: str,
        video: str,
        frame_id: int,
        video_length: int,
        labels: dict[str, int],
    ) -> Optional[dict]:
        """The data-info dict of one image, ``None`` (after :meth:`_bad`) when it is bad."""
        xml = str(annotation_path(self.data_root or "", source, split, entry))
        img = str(image_path(self.data_root or "", source, split, entry))
        try:
            frame = read_frame_xml(xml, det=source == "DET")
        except (OSError, ValueError) as e:
            return self._bad(str(e) if isinstance(e, ValueError) else f"{xml}: unreadable ({e})")
        if not osp.isfile(img):
            return self._bad(f"{img}: image missing (annotation {xml})")
        instances = self._instances(frame, xml, labels)
        img_id = f"{split}/{entry}" if source == "VID" else f"DET/{split}/{entry}"
        return {
            "img_path": img,
            "img_id": img_id,
            "height": frame.height,
            "width": frame.width,
            "instances": instances,
            "video": video,
            "frame_id": frame_id,
            "video_length": video_length,
            "corruption": frame_corruption(self._corruptions, img_id),
        }

    def _load_videos(self, labels: dict[str, int]) -> list[tuple[list[dict], Optional[set]]]:
        """``(frame infos in frame order, explicit key frame ids or None)`` per video: VID
        snippets, then DET images."""
        split = list_split(self.ann_file, self.split)
        root, videos = self.data_root or "", []
        snippets = vid_snippets(self.ann_file, split, self.test_mode)
        for (sp, snippet), spec in progress_bar(
            snippets.items(), desc="VID snippets", unit="video", enabled=len(snippets) >= 50
        ):
            n = spec["length"] or snippet_length(root, self.ann_file, sp, snippet)
            ids = sorted(set(spec["frames"])) if spec["frames"] is not None else list(range(n))
            infos = [
                self._frame_info("VID", sp, f"{snippet}/{f:06d}", snippet, f, n, labels)
                for f in ids
            ]
            keys = None if spec["keys"] is None else set(spec["keys"])
            videos.append(([i for i in infos if i is not None], keys))
        if self.det_ann_file:
            entries = det_entries(root, self.det_ann_file)
            for sp, entry in progress_bar(
                entries, desc="DET images", unit="img", enabled=len(entries) >= 500
            ):
                info = self._frame_info("DET", sp, entry, f"DET/{entry}", 0, 1, labels)
                videos.append(([info] if info is not None else [], None))
        return [v for v in videos if v[0]]

    def load_data_list(self) -> list[dict]:
        """Frame infos, key frames first (see the module docstring); fills ``video_index``."""
        self._corruptions = load_corruptions(self.data_root)
        labels = self._label_of()
        self.skipped_frames, self.dropped_objects = [], []
        videos = self._load_videos(labels)
        if self.skipped_frames:
            print_log(
                f"ImageNetVIDDataset: skipped {len(self.skipped_frames)} bad frame(s), "
                f"first: {self.skipped_frames[0]}",
                logger="current",
                level=30,
            )
        if self.dropped_objects:
            print_log(
                f"ImageNetVIDDataset: dropped {len(self.dropped_objects)} object(s) with no "
                f"pixel in the image, first: {self.dropped_objects[0]}",
                logger="current",
                level=30,
            )
        filter_empty = not self.test_mode and bool(
            (self.filter_cfg or {}).get("filter_empty_gt", False)
        )
        data_list, self.video_index, self._num_keys = key_frames_first(
            videos, self.frames_per_video, filter_empty
        )
        return data_list

    def filter_data(self) -> list[dict]:
        """Filtering is done in :meth:`load_data_list` (it only changes key frames)."""
        return self.data_list

    @force_full_init
    def __len__(self) -> int:
        """Number of key frames (the indices a sampler may draw)."""
        return self._num_keys

    @force_full_init
    def num_frames(self) -> int:
        """All frames, key frames and the other frames of their videos."""
        return len(self.data_address) if self.serialize_data else len(self.data_list)

    def get_data_info(self, idx: int) -> dict:
        """The entry of frame ``idx``, with ``clip_key``: whether ``idx`` is a
        :class:`~detection.clips.KeyFrameIndex` (the key frame of a training clip)."""
        info = super().get_data_info(idx)
        info["clip_key"] = isinstance(idx, KeyFrameIndex)
        return info

    def clip_indices(self, idx: int, clip_len: int) -> list[int]:
        """Indices of the ``clip_len`` consecutive frames of ``idx``'s video that end at
        ``idx`` (start of a video: the first ``clip_len``; shorter videos repeat the last), as
        :class:`~detection.clips.ClipBatchSampler` with ``key_position='end'`` draws them."""
        frames = self.video_index[self.get_data_info(idx)["video"]]
        return clip_for_key(frames, frames.index(idx), clip_len, "end")
