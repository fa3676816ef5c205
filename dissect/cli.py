"""``tsm dissect``: batch dissection runs and the TSM vs TSN comparison.

    tsm dissect run --checkpoint CKPT --data DATA --method cam --out DIR [--limit N]
                    [--threshold dataset|max20] [--weighting clip|frame] [--class-index K]
                    [--clips K] [--classes FILE] [--flow-checkpoint FLOW.pth --flow-data DIR] ...
    tsm dissect compare RUN_A RUN_B --out DIR [--names TSM TSN]
    torchrun --nproc-per-node N -m tsm_apps.cli dissect run ...   (one shard of clips a rank)

DATA: a video, a folder of videos or frame folders (recursive), a list file
(``path [num_frames [label]]``), a folder with val.txt, or a Something-Something-v2 JSON.
"""
from __future__ import annotations

import argparse
from typing import List, Optional

from .gradcam import WEIGHTINGS
from .job import JobConfig, run_job
from .methods import METHODS
from .report import write_compare_report
from .threshold import THRESHOLD_KINDS
from .units import ND_QUANTILE


def _run_parser(sub) -> None:
    p = sub.add_parser("run", help="maps, overlays, metrics and report for a data set")
    p.add_argument("--checkpoint", required=True, help="recognizer checkpoint (.pth)")
    p.add_argument("--data", required=True,
                   help="a video, a folder of videos or frame folders, a list file "
                        "(path [num_frames [label]]) or a Something-Something JSON")
    p.add_argument("--clips", type=int, default=1,
                   help="clips per video, spread over its segments (default 1: TSN test)")
    p.add_argument("--classes", help="class names: one a line, or SSv2 labels.json "
                                     "(default: the checkpoint's, or a bundled list)")
    p.add_argument("--out", required=True, help="run folder (re-running resumes)")
    p.add_argument("--flow-checkpoint", metavar="FLOW.pth",
                   help="also the maps of this flow model on the same segments (two-stream)")
    p.add_argument("--flow-data", metavar="DIR",
                   help="--flow-checkpoint: the tsm flow extract folder of the same videos")
    p.add_argument("--method", default="cam", choices=METHODS)
    p.add_argument("--weighting", default="clip", choices=WEIGHTINGS,
                   help="Grad-CAM channel weights per clip or per frame")
    p.add_argument("--threshold", default="dataset", choices=THRESHOLD_KINDS,
                   help="primary IoU threshold: dataset (20%% of pixels) or max20 (20%% of max)")
    p.add_argument("--limit", type=int, help="only the first N clips")
    p.add_argument("--class-index", type=int, help="explain this class (default: predicted)")
    p.add_argument("--size", type=int, help="resize shorter side + centre crop to this size")
    p.add_argument("--unit-clips", type=int, default=32, help="clips used for unit dissection")
    p.add_argument("--unit-quantile", type=float, default=ND_QUANTILE)
    p.add_argument("--no-units", action="store_true", help="skip unit dissection")
    p.add_argument("--no-sanity", action="store_true", help="skip the randomised-weights check")
    p.add_argument("--no-overlays", action="store_true", help="write no PNG/GIF overlays")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:1, ...")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _compare_parser(sub) -> None:
    p = sub.add_parser("compare", help="side-by-side report of two runs (TSM vs TSN)")
    p.add_argument("run_a")
    p.add_argument("run_b")
    p.add_argument("--out", required=True)
    p.add_argument("--names", nargs=2, metavar=("NAME_A", "NAME_B"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tsm dissect", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    _run_parser(sub)
    _compare_parser(sub)
    return parser


def _config(a: argparse.Namespace) -> JobConfig:
    return JobConfig(checkpoint=a.checkpoint, data=a.data, out=a.out, method=a.method,
                     weighting=a.weighting, threshold=a.threshold, limit=a.limit,
                     class_index=a.class_index, size=a.size, sanity=not a.no_sanity,
                     units=not a.no_units, unit_clips=a.unit_clips,
                     unit_quantile=a.unit_quantile, overlays=not a.no_overlays, seed=a.seed,
                     device=a.device, clips=a.clips, classes=a.classes,
                     flow_checkpoint=a.flow_checkpoint, flow_data=a.flow_data)


def main(argv: Optional[List[str]] = None) -> int:
    a = build_parser().parse_args(argv)
    if a.cmd == "compare":
        path = write_compare_report(a.run_a, a.run_b, a.out, a.names)
        print(f"wrote {path} and {path.parent / 'compare.json'}")
        return 0
    res = run_job(_config(a), progress=not a.quiet)
    print(f"dissect run {a.out}: {res.total} clips listed; this process: {res.done} processed, "
          f"{res.skipped} skipped (already done), {len(res.failed)} failed (see job.log)")
    return 0
