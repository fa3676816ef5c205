"""``tsm test``: a checkpoint on videos under its own test protocol (top-1/top-5, per-class
accuracy, confusion, each video's frames and top-5); ``--fuse`` two-stream, ``--online`` early
recognition.

The protocol is the checkpoint's (:mod:`tsm_apps.data.protocol`: ours as recorded by training,
the official repository's -- dense for ``_dense`` files --, mmaction2's stored config) and is
printed first; ``--clips``, ``--crops``, ``--size``, ``--scale-size``, ``--view``,
``--twice-sample``, ``--dense-sample`` change it.
Inputs are checked (checkpoint readable, of a known layout, with a classifier; videos listed;
labels within the classes) before any frame is decoded.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ..data.protocol import VIEWS
from ..data.sampling import DENSE_TEST_CLIPS
from ..io import atomic_write_text
from ..options import add_options, option, options_from

SHOWN = 20  # videos whose top-5 is printed (all are in --out)


@dataclass
class TestConfig:
    """Everything ``tsm test`` takes (one field a flag, see :mod:`tsm_apps.options`)."""

    checkpoint: str = field(**option(positional=True))
    data: str = ""
    classes: Optional[str] = None
    segments: Optional[int] = None
    clips: Optional[int] = None
    crops: Optional[int] = field(default=None, **option(choices=(1, 3, 5, 10)))
    size: Optional[int] = None
    scale_size: Optional[int] = None
    view: Optional[str] = field(default=None, **option(choices=VIEWS))
    twice_sample: bool = field(
        default=False,
        **option(
            "2 clips: the segment centres, then the segment starts (the official --twice_sample; "
            "Something-Something's accurate setting adds --crops 3 --size 256)"
        ),
    )
    dense_sample: bool = field(
        default=False,
        **option(
            "dense clips of a 64-frame window, 10 unless --clips (the official --dense_sample; the "
            "non-local protocol adds --crops 3 --size 256)"
        ),
    )
    device: str = "auto"
    out: Optional[str] = field(default=None, **option("write the results as JSON here"))
    progress: bool = True
    fuse: Optional[str] = field(default=None, **option("fuse with this Flow checkpoint (FLOW.pth)"))
    flow_data: Optional[str] = field(
        default=None, **option("--fuse: the tsm flow extract folder of the same videos (val.txt)")
    )
    fuse_weights: str = field(
        default="", **option("--fuse: extra W_RGB,W_FLOW (1,1 and 1,1.5 are always reported)")
    )
    online: bool = field(
        default=False,
        **option("CHECKPOINT is an online TSM: accuracy vs fraction of the video seen"),
    )
    offline_checkpoint: Optional[str] = field(
        default=None, **option("--online: the offline TSM to compare")
    )
    tsn_checkpoint: Optional[str] = field(default=None, **option("--online: the TSN to compare"))
    stride: int = field(default=2, **option("--online: frames between streamed frames"))

    def protocol_options(self) -> dict:
        """The changes to the checkpoint's test protocol (None: keep its value)."""
        out = {
            "clips": self.clips,
            "crops": self.crops,
            "crop_size": self.size,
            "scale_size": self.scale_size,
            "view": self.view,
        }
        if self.twice_sample and self.dense_sample:
            raise ValueError("--twice-sample and --dense-sample are two samplings: choose one")
        if self.twice_sample:
            if self.clips not in (None, 2):
                raise ValueError(f"--twice-sample gives 2 clips, got --clips {self.clips}")
            out.update(sampling="twice", clips=2)
        if self.dense_sample:
            out.update(sampling="dense", clips=self.clips or DENSE_TEST_CLIPS)
        return out


def build_parser():
    import argparse

    p = argparse.ArgumentParser(prog="tsm test", description=__doc__.splitlines()[0])
    return add_options(p, TestConfig)


def _checked(cfg: TestConfig) -> tuple:
    """The checkpoint opened and the videos listed, labels checked, before any decoding."""
    from ..data.sources import find_sources
    from ..distributed import env_from, pick_device
    from .recognition import open_model

    if not cfg.data:
        raise ValueError("--data is required: " + "a video, a folder, a list file or an SSv2 JSON")
    device = pick_device(cfg.device, env_from({}))
    ck = open_model(
        cfg.checkpoint, cfg.classes, device=device, segments=cfg.segments, **cfg.protocol_options()
    )
    videos = find_sources(cfg.data)
    k = len(ck.names)
    bad = next((v for v in videos if v.label is not None and v.label >= k), None)
    if bad is not None:
        raise ValueError(f"{bad.path}: label {bad.label} but the checkpoint has {k} classes")
    return ck, videos


def _print(res: dict) -> None:
    for v in res["predictions"][:SHOWN]:
        best = ", ".join(f"{t['name']} {100 * t['prob']:.1f}%" for t in v["top5"])
        label = "" if v["label"] is None else f" [label {v['label']}]"
        print(f"  {v['video']}{label}: {best}")
    if res["videos"] > SHOWN:
        print(f"  ... {res['videos'] - SHOWN} more videos (all in --out)")
    if not res["labelled"]:
        print(f"tsm test: {res['videos']} videos, no labels: predictions only")
        return
    print(
        f"tsm test: {res['labelled']} labelled of {res['videos']} videos: top-1 "
        f"{res['top1']:.2f}%  top-5 {res['top5']:.2f}%  mean class "
        f"{res['mean_class_accuracy']:.2f}%"
    )


def main(argv: Optional[list] = None) -> int:
    cfg = options_from(TestConfig, build_parser().parse_args(argv))
    if cfg.online or cfg.fuse:
        from .fusion import main_streams

        return main_streams(cfg)
    from .evaluate import evaluate

    ck, videos = _checked(cfg)
    print(f"tsm test: {ck.path.name} ({ck.layout} layout): {ck.protocol.describe()}")
    for v in (v for v in videos if v.error):
        print(f"tsm test: skipped {v.path}: {v.error}", file=sys.stderr)
    videos = [v for v in videos if not v.error]
    res = evaluate(ck, videos, cfg.progress)
    res["classes"] = ck.names
    _print(res)
    if cfg.out:
        atomic_write_text(Path(cfg.out), json.dumps(res, indent=1))
    return 0
