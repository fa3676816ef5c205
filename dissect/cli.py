"""``tsm dissect``: batch dissection runs and the TSM vs TSN comparison.

    tsm dissect run --checkpoint CKPT --data DATA --method cam --out DIR [--limit N]
                    [--threshold dataset|max20] [--weighting clip|frame] [--class-index K]
                    [--segments T] [--clips K] [--size S] [--scale-size S] [--view frame]
                    [--classes FILE] [--flow-checkpoint FLOW.pth --flow-data DIR]
                    [--faithfulness [--faithfulness-steps K]] ...
    tsm dissect compare RUN_A RUN_B --out DIR [--names TSM TSN]
    torchrun --nproc-per-node N -m tsm_apps.cli dissect run ...   (one shard of clips a rank)

DATA: a video, a folder of videos or frame folders (recursive), a list file
(``path [num_frames [label]]``), a folder with val.txt, or a Something-Something-v2 JSON.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import List, Optional

from tsm_apps.options import add_options, option, options_from

from .comparison import write_compare_report
from .job import run_job
from .job_config import JobConfig


def _run_parser(sub) -> None:
    p = sub.add_parser("run", help="maps, overlays, metrics and report for a data set")
    add_options(p, JobConfig)


@dataclass
class CompareConfig:
    """What ``tsm dissect compare`` takes (each field a flag: :mod:`tsm_apps.options`)."""

    run_a: str = field(
        **option("the first run folder (a tsm dissect run --out), e.g. TSM's", positional=True)
    )
    run_b: str = field(**option("the second run folder, e.g. TSN's", positional=True))
    out: str = field(**option("folder of the report: compare.html and compare.json"))
    names: Optional[list] = field(
        default=None,
        **option(
            "the two runs' names in the report (default: each run's own)",
            nargs=2,
            type=str,
            metavar=("NAME_A", "NAME_B"),
        ),
    )


def _compare_parser(sub) -> None:
    p = sub.add_parser("compare", help="side-by-side report of two runs (TSM vs TSN)")
    add_options(p, CompareConfig)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tsm dissect", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    _run_parser(sub)
    _compare_parser(sub)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    a = build_parser().parse_args(argv)
    if a.cmd == "compare":
        c = options_from(CompareConfig, a)
        path = write_compare_report(c.run_a, c.run_b, c.out, c.names)
        print(f"wrote {path} and {path.parent / 'compare.json'}")
        return 0
    cfg = options_from(JobConfig, a)
    res = run_job(cfg, progress=cfg.progress)
    print(
        f"dissect run {a.out}: {res.total} clips listed; this process: {res.done} processed, "
        f"{res.skipped} skipped (already done), {len(res.failed)} failed (see job.log)"
    )
    return 0
