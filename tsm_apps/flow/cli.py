"""``tsm flow extract SRC --out DIR``: TSN/TSM flow folders for every video of SRC.

SRC is anything :func:`tsm_apps.data.sources.find_sources` reads (a video, a folder of videos or
frame folders, a list file, an SSv2 JSON); a data folder with ``train.txt`` (``tsm synth
temporal``'s layout) has every list in it (train/val/test.txt) processed. Each video's flow goes
to ``DIR/<its name without suffix>/``; the lists are written again in DIR with the flow folders
and their flow-field counts, ready for ``tsm train --modality flow --data DIR``. Re-running
resumes (finished folders hold ``done.json``). ``DIR/extract.json`` holds the timing.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ..data.flow import BOUND
from ..options import add_options, option, options_from
from .extract import FLOW_METHODS

LISTS = ("train.txt", "val.txt", "test.txt")


@dataclass
class ExtractOptions:
    """What ``tsm flow extract`` takes (each field an option: :mod:`tsm_apps.options`)."""

    src: str = field(
        **option("videos, frame folders, a list file or a data folder", positional=True)
    )
    out: str = field(**option("output folder (resumable)"))
    method: str = field(
        default="tvl1",
        **option("tvl1 (OpenCV contrib DualTVL1) or farneback (fast)", choices=FLOW_METHODS),
    )
    bound: float = field(default=BOUND, **option("clip flow to +-BOUND px"))
    workers: int = field(default=1, **option("parallel processes"))
    progress: bool = True


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tsm flow", description="Optical flow (TSN/TSM format).")
    sub = p.add_subparsers(dest="action", required=True)
    add_options(
        sub.add_parser(
            "extract",
            help="flow_x/flow_y jpgs for every frame pair",
            description="flow_x/flow_y jpgs for every frame pair",
        ),
        ExtractOptions,
    )
    return p


def _sources(src: Path) -> dict:
    """``{list name or '': [VideoSource, ...]}`` for SRC."""
    from ..data.lists import read_video_list
    from ..data.sources import find_sources

    if src.is_dir() and (src / "train.txt").is_file():
        return {n: read_video_list(src / n) for n in LISTS if (src / n).is_file()}
    return {"": find_sources(src)}


def _job(s, out: Path, method: str, bound: float):
    from ..data.flow import flow_subfolder
    from .extract import FlowJob

    rel = flow_subfolder(s.name, s.path.is_file())
    return FlowJob(s.path, out / rel, method, bound, s.frame_template, s.start_index)


def run(args: ExtractOptions) -> int:
    from ..data.lists import write_tsm_list
    from ..data.record import VideoSource
    from .extract import extract_all, write_summary

    src, out = Path(args.src), Path(args.out)
    groups = _sources(src)  # checks SRC before any decoding
    jobs, seen = [], {}
    for lst, sources in groups.items():
        for s in sources:
            job = _job(s, out, args.method, args.bound)
            seen.setdefault(job.out_dir, job)
    jobs = list(seen.values())
    t0 = time.perf_counter()
    records = extract_all(jobs, args.workers, args.progress)
    by_dir = {j.out_dir: r for j, r in zip(jobs, records)}
    for lst, sources in groups.items():
        recs = [
            VideoSource(
                _job(s, out, args.method, args.bound).out_dir,
                by_dir[_job(s, out, args.method, args.bound).out_dir]["flow"],
                s.label if s.label is not None else -1,
            )
            for s in sources
        ]
        write_tsm_list(out / (lst or "list.txt"), recs)
    if src.is_dir() and (src / "classes.txt").is_file():
        (out / "classes.txt").write_text((src / "classes.txt").read_text())
    summary = write_summary(out, records, time.perf_counter() - t0)
    fresh = sum(1 for r in records if not r.get("skipped"))
    print(
        f"tsm flow extract: {len(records)} videos ({fresh} extracted, "
        f"{len(records) - fresh} already done), {sum(r['flow'] for r in records)} flow fields, "
        f"{sum(r['seconds'] for r in records):.1f} s of flow ({args.method}) -> {summary}"
    )
    return 0


def main(argv: Optional[list] = None) -> int:
    args = options_from(
        ExtractOptions, build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    )
    try:
        return run(args)
    except (FileNotFoundError, ValueError) as e:
        print(f"tsm flow: error: {e}", file=sys.stderr)
        return 2
