"""``tsm synth {temporal,vid}``: write the synthetic data sets.

    tsm synth temporal --out DIR [--videos N] [--frames F] [--size S] [--seed K] [--workers P]
    tsm synth vid --out DIR [--train-videos N] [--val-videos M] [--seed K] [--det-images D]
                  [--motion-blur B]

Each sub-command's options are a dataclass (:class:`TemporalOptions`, :class:`VidOptions`)
built by :mod:`tsm_apps.options`.

Bad arguments print a one-line error and return exit code 2 (no traceback). Both generators are
restartable: ``temporal`` skips the videos an interrupted run already wrote, ``vid`` builds the
set in a temporary folder and renames it into place.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from typing import Optional

from ..options import add_options, option, options_from
from .vid_snippets import MOTION_BLUR


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


def _non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return value


@dataclass
class TemporalOptions:
    """``tsm synth temporal``: 10 time-reversed motion classes with static distractors; writes
    videos/, train.txt, val.txt, test.txt, classes.txt, annotations.json."""

    out: str = field(**option("output folder (empty, or a resumable run)"))
    videos: int = field(
        default=720,
        **option("number of clips (720: 480 train, 120 val, 120 held-out test)", type=_count(2)),
    )
    frames: int = field(default=16, **option("frames per clip", type=_count(4)))
    size: int = field(default=112, **option("frame side in pixels", type=_count(32)))
    seed: int = field(default=0, **option(type=_count(0)))
    distractors: Optional[list] = field(
        default=None,
        **option(
            "static distractors per clip, drawn uniformly between FEWEST and MOST (default 0 2)",
            type=_count(0),
            nargs=2,
            metavar=("FEWEST", "MOST"),
        ),
    )
    layout: Optional[str] = field(
        default=None,
        **option(  # temporal_clips.LAYOUTS
            "path: distractors clear of the actor's path (default); stage: the actor moves inside "
            "a square the distractors stay out of, one object size range for all, so a single "
            "frame does not tell the motion family",
            choices=("path", "stage"),
        ),
    )
    workers: Optional[int] = field(
        default=None,
        **option("processes (default: all CPUs; the output does not depend on it)", type=_count(1)),
    )
    progress: bool = True


@dataclass
class VidOptions:
    """``tsm synth vid``: Data/VID, Annotations/VID, ImageSets/VID, the MSRA lists
    ImageSets/{VID_train_15frames,VID_val_videos,DET_train_30classes}.txt, Data/DET,
    Annotations/DET, corruptions.json."""

    out: str = field(**option("output folder (absent or empty)"))
    train_videos: int = field(default=24, **option("train snippets", type=_count(1)))
    val_videos: int = field(default=8, **option("val snippets", type=_count(1)))
    frames: int = field(default=24, **option("frames per snippet", type=_count(12)))
    width: int = field(default=160, **option("frame width", type=_count(64)))
    height: int = field(default=128, **option("frame height", type=_count(64)))
    seed: int = field(default=0, **option(type=_count(0)))
    det_images: int = field(
        default=12, **option("images of the DET part (0: none)", type=_count(0))
    )
    one_frame_every: int = field(
        default=2,
        **option(
            "every n-th val snippet gets an object seen in one frame (0: none)", type=_count(0)
        ),
    )
    motion_blur: float = field(
        default=MOTION_BLUR,
        **option(
            "an object's streak length over its speed in pixels per frame (0: sharp objects)",
            type=_non_negative,
        ),
    )
    progress: bool = True


def _doc(cls: type) -> str:
    return " ".join(cls.__doc__.split(": ", 1)[1].split())


def build_parser() -> argparse.ArgumentParser:
    """``tsm synth {temporal,vid}``, each sub-command's options from its dataclass
    (:mod:`tsm_apps.options`)."""
    p = _Parser(prog="tsm synth", description="write the synthetic data sets")
    sub = p.add_subparsers(
        dest="kind", required=True, metavar="{temporal,vid}", parser_class=_Parser
    )
    add_options(
        sub.add_parser(
            "temporal",
            description=_doc(TemporalOptions),
            help="temporal-reasoning set: mp4 videos + TSM list files",
        ),
        TemporalOptions,
    )
    add_options(
        sub.add_parser(
            "vid",
            description=_doc(VidOptions),
            help="ImageNet-VID layout with motion classes and corruptions",
        ),
        VidOptions,
    )
    return p


def _temporal(a: TemporalOptions) -> str:
    from . import temporal as synth_temporal

    extra = {"distractors": tuple(a.distractors)} if a.distractors else {}
    if a.layout:
        extra["layout"] = a.layout
    root = synth_temporal.generate(
        a.out,
        videos=a.videos,
        frames=a.frames,
        size=a.size,
        seed=a.seed,
        workers=a.workers,
        progress=a.progress,
        **extra,
    )
    return f"{a.videos} clips of {a.frames} frames at {a.size}x{a.size} in {root}"


def _vid(a: VidOptions) -> str:
    from ..io import read_json
    from . import vid as synth_vid

    root = synth_vid.generate(
        a.out,
        train_videos=a.train_videos,
        val_videos=a.val_videos,
        seed=a.seed,
        frames=a.frames,
        width=a.width,
        height=a.height,
        det_images=a.det_images,
        one_frame_every=a.one_frame_every,
        progress=a.progress,
        motion_blur=a.motion_blur,
    )
    motion = read_json(root / "synth.json")["motion_classes"]
    return (
        f"{a.train_videos} train + {a.val_videos} val snippets of {a.frames} frames and "
        f"{a.det_images} DET images in {root}; motion classes (boxes) {motion}"
    )


def main(argv: Optional[list] = None) -> int:
    """Run ``tsm synth``; returns the exit code (0 done, 2 bad arguments or folder)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(argv)
    except _ArgError as e:
        kind = argv[0] + " " if argv and argv[0] in ("temporal", "vid") else ""
        print(f"{e}\n(see tsm synth {kind}--help)", file=sys.stderr)
        return 2
    except SystemExit as e:  # --help
        return int(e.code or 0)
    t0 = time.perf_counter()
    try:
        if args.kind == "temporal":
            what = _temporal(options_from(TemporalOptions, args))
        else:
            what = _vid(options_from(VidOptions, args))
    except (ValueError, NotADirectoryError, FileExistsError) as e:
        print(f"tsm synth {args.kind}: error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {what} ({time.perf_counter() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
