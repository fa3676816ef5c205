"""The options of ``tsm detect train|test|video|compare``, one typed dataclass each, turned into flags by
:func:`tsm_apps.options.add_options` -- the same names for the same ideas as ``tsm train``,
``tsm test`` and ``tsm dissect run`` (``--out``, ``--device``, ``--progress``)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field, fields
from typing import Optional

from tsm_apps.evaluation.bootstrap import RESAMPLES
from tsm_apps.options import add_options, option

__all__ = ["DetectTrain", "DetectTest", "DetectVideo", "DetectCompare", "build_parser"]


CONFIG = option(
    "an mmdet config file (detection/configs/*.py or a work folder's config.py)", positional=True
)
CHECKPOINT = option("the detector's weights (final.pth or an iter_N.pth)", positional=True)


@dataclass
class DetectTrain:
    """``tsm detect train``."""

    config: str = field(**CONFIG)
    work_dir: Optional[str] = field(
        default=None,
        **option("output folder (default runs/detection/<config name>)", aliases=("--out",)),
    )
    resume: Optional[str] = field(
        default=None,
        **option(
            "resume from CKPT, or from the latest checkpoint of the work folder",
            nargs="?",
            const="auto",
            metavar="CKPT",
        ),
    )
    cfg_options: dict = field(default_factory=dict)  # --cfg-options (mmengine's DictAction)


@dataclass
class DetectTest:
    """``tsm detect test``."""

    config: str = field(**CONFIG)
    checkpoint: str = field(**CHECKPOINT)
    out: Optional[str] = field(
        default=None,
        **option(
            "per-frame detections JSON (default <ckpt dir>/test/results.json); metrics.json is "
            "written beside it"
        ),
    )
    cfg_options: dict = field(default_factory=dict)  # --cfg-options (mmengine's DictAction)


@dataclass
class DetectVideo:
    """``tsm detect video``."""

    config: str = field(**CONFIG)
    checkpoint: str = field(**CHECKPOINT)
    video: str = field(**option("a video file or a frame folder", positional=True))
    out: str = field(default="", **option("detections JSON (required)"))
    render: Optional[str] = field(
        default=None, **option("also write the video with boxes drawn (.mp4)")
    )
    score_thr: float = field(default=0.3, **option("boxes below this score are left out"))
    fps: Optional[float] = field(
        default=None, **option("frame rate of --render (default: the input's, else 25)")
    )
    device: str = "auto"
    frame_template: Optional[str] = field(
        default=None,
        **option(
            "frame folder file names, e.g. '{:06d}.JPEG' (ImageNet-VID); default 'img_{:05d}.jpg'"
        ),
    )
    start_index: Optional[int] = field(
        default=None, **option("number of a folder's first frame (default 1)")
    )
    progress: bool = True
    cfg_options: dict = field(default_factory=dict)  # --cfg-options (mmengine's DictAction)


@dataclass
class DetectCompare:
    """``tsm detect compare``."""

    base: list = field(
        default_factory=list,
        **option(
            "results.json of the baseline arm (tsm detect test), one per training seed",
            nargs="+",
            type=str,
        ),
    )
    other: list = field(
        default_factory=list,
        **option(
            "results.json of the other arm, the same seeds in the same order", nargs="+", type=str
        ),
    )
    keys: list = field(
        default_factory=list,
        **option(
            "only these splits, e.g. mAP mAP_fast (default: every split)", nargs="+", type=str
        ),
    )
    resamples: int = field(default=RESAMPLES, **option("bootstrap resamples of the test snippets"))
    seed: int = field(default=0, **option("seed of the resampling"))
    out: Optional[str] = field(default=None, **option("also write the comparison to this JSON"))


COMMANDS = {
    "train": (DetectTrain, "train a detector config with mmengine's Runner"),
    "test": (DetectTest, "evaluate a checkpoint: mAP overall/slow/medium/fast/corrupted"),
    "video": (DetectVideo, "online detection on a video file or frame folder"),
    "compare": (
        DetectCompare,
        "two arms' test results over training seeds: other - base mAP per split, per seed, and "
        "its paired-bootstrap 95%% interval over the test snippets",
    ),
}


def build_parser(description: str = "") -> argparse.ArgumentParser:
    """``tsm detect`` with one sub-command per dataclass of :data:`COMMANDS`."""
    from mmengine.config import DictAction  # --cfg-options k=v ... as mmengine parses them

    p = argparse.ArgumentParser(prog="tsm detect", description=description)
    sub = p.add_subparsers(dest="cmd", required=True)
    for name, (cls, text) in COMMANDS.items():
        q = sub.add_parser(name, help=text)
        add_options(q, cls, skip=("cfg_options",))
        if "cfg_options" not in {f.name for f in fields(cls)}:
            continue
        q.add_argument(
            "--cfg-options",
            dest="cfg_options",
            default={},
            nargs="+",
            action=DictAction,
            help="override config keys, e.g. data_root=/data/vid/ train_cfg.max_iters=100",
        )
    return p
