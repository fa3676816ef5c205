"""``tsm synth {temporal,vid}``: write the synthetic data sets.

    tsm synth temporal --out DIR [--videos N] [--frames F] [--size S] [--seed K]
    tsm synth vid --out DIR [--train-videos N] [--val-videos M] [--seed K] [--det-images D]

Bad arguments print a one-line error and return exit code 2 (no traceback). Both generators are
restartable: ``temporal`` skips the videos an interrupted run already wrote, ``vid`` builds the
set in a temporary folder and renames it into place.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Optional


class _ArgError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # raise instead of sys.exit, main returns 2
        raise _ArgError(f"{self.prog}: error: {message}")


def _count(lo: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < lo:
            raise argparse.ArgumentTypeError(f"must be >= {lo}, got {value}")
        return value
    return parse


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="tsm synth", description="write the synthetic data sets")
    sub = p.add_subparsers(dest="kind", required=True, metavar="{temporal,vid}",
                         parser_class=_Parser)
    t = sub.add_parser("temporal", help="temporal-reasoning set: mp4 videos + TSM list files",
                       description="10 time-reversed motion classes with static distractors; "
                                   "writes videos/, train.txt, val.txt, test.txt, classes.txt, "
                                   "annotations.json")
    t.add_argument("--out", required=True, help="output folder (empty, or a resumable run)")
    t.add_argument("--videos", type=_count(2), default=720,
                   help="number of clips (720: 480 train, 120 val, 120 held-out test)")
    t.add_argument("--frames", type=_count(4), default=16, help="frames per clip (16)")
    t.add_argument("--size", type=_count(32), default=112, help="frame side in pixels (112)")
    t.add_argument("--seed", type=_count(0), default=0)
    t.add_argument("--distractors", type=_count(0), nargs=2, default=None,
                   metavar=("FEWEST", "MOST"), help="static distractors per clip, drawn uniformly (0 2)")
    t.add_argument("--layout", choices=("path", "stage"), default=None,  # synth_temporal.LAYOUTS
                   help="path: distractors clear of the actor's path (default); stage: the actor "
                        "moves inside a square the distractors stay out of, one object size "
                        "range for all, so a single frame does not tell the motion family")
    t.add_argument("--workers", type=_count(1), default=None,
                   help="processes (default: all CPUs; the output does not depend on it)")
    v = sub.add_parser("vid", help="ImageNet-VID layout with motion classes and corruptions",
                       description="Data/VID, Annotations/VID, ImageSets/VID, the MSRA lists "
                                   "ImageSets/{VID_train_15frames,VID_val_videos,"
                                   "DET_train_30classes}.txt, Data/DET, Annotations/DET, "
                                   "corruptions.json")
    v.add_argument("--out", required=True, help="output folder (absent or empty)")
    v.add_argument("--train-videos", type=_count(1), default=24, help="train snippets (24)")
    v.add_argument("--val-videos", type=_count(1), default=8, help="val snippets (8)")
    v.add_argument("--frames", type=_count(12), default=24, help="frames per snippet (24)")
    v.add_argument("--width", type=_count(64), default=160, help="frame width (160)")
    v.add_argument("--height", type=_count(64), default=128, help="frame height (128)")
    v.add_argument("--seed", type=_count(0), default=0)
    v.add_argument("--det-images", type=_count(0), default=12,
                   help="images of the DET part (12; 0: none)")
    v.add_argument("--one-frame-every", type=_count(0), default=2,
                   help="every n-th val snippet gets an object seen in one frame (2; 0: none)")
    for s in (t, v):
        s.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def _temporal(a: argparse.Namespace) -> str:
    from . import temporal as synth_temporal
    extra = {"distractors": tuple(a.distractors)} if a.distractors else {}
    if a.layout:
        extra["layout"] = a.layout
    root = synth_temporal.generate(a.out, videos=a.videos, frames=a.frames, size=a.size,
                                   seed=a.seed, workers=a.workers,
                                   progress=not a.no_progress, **extra)
    return f"{a.videos} clips of {a.frames} frames at {a.size}x{a.size} in {root}"


def _vid(a: argparse.Namespace) -> str:
    from . import vid as synth_vid
    root = synth_vid.generate(a.out, train_videos=a.train_videos, val_videos=a.val_videos,
                              seed=a.seed, frames=a.frames, width=a.width, height=a.height,
                              det_images=a.det_images, one_frame_every=a.one_frame_every,
                              progress=not a.no_progress)
    motion = json.loads((root / "synth.json").read_text())["motion_classes"]
    return (f"{a.train_videos} train + {a.val_videos} val snippets of {a.frames} frames and "
            f"{a.det_images} DET images in {root}; motion classes (boxes) {motion}")


def main(argv: Optional[list] = None) -> int:
    """Run ``tsm synth``; returns the exit code (0 done, 2 bad arguments or folder)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        a = build_parser().parse_args(argv)
    except _ArgError as e:
        kind = argv[0] + " " if argv and argv[0] in ("temporal", "vid") else ""
        print(f"{e}\n(see tsm synth {kind}--help)", file=sys.stderr)
        return 2
    except SystemExit as e:  # --help
        return int(e.code or 0)
    t0 = time.perf_counter()
    try:
        what = _temporal(a) if a.kind == "temporal" else _vid(a)
    except (ValueError, NotADirectoryError, FileExistsError) as e:
        print(f"tsm synth {a.kind}: error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {what} ({time.perf_counter() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
