"""Running a generator's per-video jobs: in this process or a fork pool, in order, with a
progress bar; and claiming an output folder for one set of generation parameters."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable, Optional, Sequence

from ..io import atomic_write_text, read_json
from ..progress import progress_bar


def claim(root: Path, params: dict) -> None:
    """Record ``params`` in ``root/synth.json``; refuse a folder generated with other ones or a
    non-empty folder without one (a re-run with the same parameters resumes)."""
    manifest = root / "synth.json"
    if manifest.is_file():
        old = read_json(manifest)
        if old != params:
            raise ValueError(
                f"{root} already holds a synthetic set made with {old}; "
                f"choose another --out or delete it"
            )
    elif root.is_dir() and any(root.iterdir()):
        raise ValueError(f"{root} is not empty and holds no synth.json; choose an empty --out")
    atomic_write_text(manifest, json.dumps(params, indent=1, sort_keys=True) + "\n")


def run_jobs(
    fn: Callable, jobs: Sequence, workers: Optional[int], progress: bool, desc: str
) -> list:
    """``[fn(job) for job in jobs]`` in order, over ``workers`` forked processes (default: the
    CPU count); the results do not depend on ``workers``."""
    workers = max(1, min(workers or os.cpu_count() or 1, len(jobs)))
    bar = progress_bar(desc=desc, total=len(jobs), unit="video", enabled=progress)
    import multiprocessing as mp

    pool = mp.get_context("fork").Pool(workers) if workers > 1 else None
    out = []
    try:
        for r in map(fn, jobs) if pool is None else pool.imap(fn, jobs, chunksize=4):
            out.append(r)
            bar.update()
    finally:
        if pool is not None:
            pool.close()
            pool.join()
        bar.close()
    return out
