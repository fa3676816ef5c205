"""Detectors of the runs folder run over frames (whole or streamed); VID ground truth, matches."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from ...runs.layout import DEFAULT_ROOT, RunLayout
from .base import MODELS, Progress
from .config_data import checked_copy
from .runs_folder import within

if TYPE_CHECKING:  # the records are detection's (imported with mmdet, so not at start-up)
    from detection.records import FrameDetections, FrameTruth

__all__ = [
    "SCORE_FLOOR",
    "DetectorSpec",
    "find_detectors",
    "load_detector",
    "detect",
    "vid_results",
    "read_truth",
    "found_objects",
]


SCORE_FLOOR = 0.05
"""Detections scoring below this are dropped by the detectors; the page's minimum score
slider starts here."""


@dataclass(frozen=True)
class DetectorSpec:
    """A trained detector found under the runs folder: display name and its work folder."""

    name: str
    folder: Path

    @property
    def key(self) -> str:
        files = sorted(self.folder.glob("*"))
        stamp = max((f.stat().st_mtime for f in files), default=0.0)
        return f"{self.folder}:{stamp}"


def find_detectors(runs: Path) -> dict[str, DetectorSpec]:
    """TSN and TSM detectors under ``runs`` (``<runs>/detection/{tsn,tsm}`` or
    ``<runs>/demo/detection/{tsn,tsm}``) that hold a checkpoint; a work folder that is, or
    holds, a link out of ``runs`` is not listed (the list is confined like typed paths)."""
    found = {}
    for name in MODELS:
        for layout in (RunLayout(runs), RunLayout(runs / DEFAULT_ROOT.name)):
            folder = layout.detector(name.lower())
            if _confined(folder, runs) and any(folder.glob("*.pth")):
                found[name] = DetectorSpec(name, folder)
                break
    return found


def _confined(folder: Path, runs: Path) -> bool:
    """``folder`` is a folder in ``runs`` and every file in it stays there, links resolved."""
    return (
        folder.is_dir() and within(folder, runs) and all(within(f, runs) for f in folder.iterdir())
    )


def load_detector(spec: DetectorSpec) -> Any:
    """The detector of ``spec`` on CPU (CUDA when present), in eval mode. Its config is read as
    data (:mod:`.config_data`: refused, with the file and line, unless it is plain data)."""
    from detection.inference import find_run_files, load_detector

    config, checkpoint = find_run_files(spec.folder)
    with tempfile.TemporaryDirectory(prefix="tsm_ui_config_") as tmp:
        return load_detector(checked_copy(config, Path(tmp)), checkpoint=checkpoint)


def detect(
    detector: Any, frames: np.ndarray, progress: Optional[Progress] = None
) -> list[FrameDetections]:
    """Run ``detector`` over frames ``(T, H, W, 3)`` in order (online TSM keeps its shift
    state across frames); one :class:`detection.records.FrameDetections` per frame. The run's
    state is its own (the model holds none), so other sessions may use ``detector`` meanwhile."""
    from detection.live import detect_video

    return detect_video(detector, frames, progress=progress, score_thr=SCORE_FLOOR)


def vid_results(runs: Path) -> tuple[dict[str, dict[str, float]], Path]:
    """The latest VID evaluation under ``runs``: ``{model: {overall, slow, medium, fast,
    corrupted}}`` (mAP in percent) and the file read."""
    from detection.results import latest_vid_results

    return latest_vid_results(runs)


# ----------------------------------------------------------------------------- ground truth
def read_truth(snippet: Path, num_frames: int) -> Optional[list[FrameTruth]]:
    """Per-frame ground truth of an ImageNet-VID snippet folder ``.../Data/VID/<split>/<name>``
    from ``.../Annotations/VID/<split>/<name>/%06d.xml``; ``None`` when it has no annotations.
    Boxes in pixel edges (the XML's inclusive ``xmax`` + 1, as the evaluation), class ids in
    ILSVRC2015_VID order with their names. A frame without its XML has no boxes; a malformed
    XML raises ValueError naming it."""
    from detection.records import FrameTruth
    from tsm_apps.data.vid_layout import (
        FRAME_NAME,
        VID_CLASSES,
        WNID_TO_NAME,
        annotation_folder,
        edge_box,
        read_frame_xml,
    )

    folder = annotation_folder(snippet)
    if folder is None or not folder.is_dir():
        return None
    index = {wnid: i for i, (wnid, _) in enumerate(VID_CLASSES)}
    out = []
    for t in range(num_frames):
        xml = folder / (FRAME_NAME.format(t) + ".xml")
        objs = read_frame_xml(xml).objects if xml.is_file() else []
        boxes = np.array([edge_box(o.box) for o in objs], np.float64).reshape(-1, 4)
        ids = [index[o.name] for o in objs]
        out.append(FrameTruth(boxes, ids, tuple(WNID_TO_NAME[o.name] for o in objs)))
    return out


def found_objects(dets: FrameDetections, truth: FrameTruth) -> np.ndarray:
    """``(G,)`` bool: ground-truth objects of the frame that ``dets`` finds, matched as the VID
    evaluation does (greedy by score, same class, IoU >= min(0.5, wh/((w+10)(h+10))))."""
    from detection.vid_eval import found_truth

    return found_truth(dets, truth)
