"""Optical flow for every pair of consecutive frames, written as TSN/TSM flow folders.

``extract_video(src, out_dir)`` writes ``flow_x_%05d.jpg`` / ``flow_y_%05d.jpg`` (1-based, one
pair per frame pair, :func:`tsm_apps.data.flow.flow_to_uint8`: clipped to ±20 px, 0-255) and
then ``done.json`` (frames, seconds, method): a folder with ``done.json`` is complete, so a
re-run skips it (resumable). Methods: ``"tvl1"`` (OpenCV contrib's ``DualTVL1OpticalFlow``,
TSN's choice) and ``"farneback"`` (fast). Frames are converted to grey before the flow.

``extract_all`` runs videos in parallel processes (``workers``) with a progress bar and
returns per-video records for the flow lists.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Callable, Optional, Sequence

import numpy as np

from ..data.flow import BOUND, X_TEMPLATE, Y_TEMPLATE, flow_to_uint8
from ..io import atomic_path, atomic_write_json, read_json
from ..progress import progress_bar

FLOW_METHODS = ("tvl1", "farneback")
DONE = "done.json"


def _cv2():
    import cv2

    if not hasattr(cv2, "optflow"):
        raise RuntimeError(
            "TV-L1 needs OpenCV contrib: pip install "
            "opencv-contrib-python-headless (pinned in tools/requirements.txt)"
        )
    return cv2


def flow_function(method: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """``f(prev_gray, next_gray) -> (H, W, 2)`` float32 flow in pixels for ``method``."""
    if method not in FLOW_METHODS:
        raise ValueError(f"flow method must be one of {FLOW_METHODS}, got {method!r}")
    cv2 = _cv2()
    if method == "tvl1":
        tvl1 = cv2.optflow.DualTVL1OpticalFlow_create()
        return lambda a, b: tvl1.calc(a, b, None)
    return lambda a, b: cv2.calcOpticalFlowFarneback(a, b, None, 0.5, 3, 15, 3, 5, 1.2, 0)


def to_gray(frames: np.ndarray) -> np.ndarray:
    """uint8 RGB ``(F, H, W, 3)`` -> uint8 grey ``(F, H, W)`` (OpenCV's BT.601 weights)."""
    cv2 = _cv2()
    return np.stack([cv2.cvtColor(f, cv2.COLOR_RGB2GRAY) for f in frames])


def write_flow(out_dir: Path, gray: np.ndarray, method: str, bound: float = BOUND) -> int:
    """Flow of every consecutive pair of ``gray`` ``(F, H, W)`` into ``out_dir``; returns F-1."""
    cv2 = _cv2()
    calc = flow_function(method)
    out_dir.mkdir(parents=True, exist_ok=True)
    for i in range(len(gray) - 1):
        img = flow_to_uint8(calc(gray[i], gray[i + 1]), bound)
        for c, tmpl in enumerate((X_TEMPLATE, Y_TEMPLATE)):
            with atomic_path(out_dir / tmpl.format(i + 1)) as tmp:
                ok, buf = cv2.imencode(".jpg", np.ascontiguousarray(img[..., c]))
                if not ok:
                    raise RuntimeError(f"cannot encode {out_dir / tmpl.format(i + 1)}")
                tmp.write_bytes(buf.tobytes())
    return len(gray) - 1


@dataclass(frozen=True)
class FlowJob:
    """One video: ``src`` (file or frame folder), ``out_dir`` and the frame-folder template."""

    src: Path
    out_dir: Path
    method: str = "tvl1"
    bound: float = BOUND
    frame_template: Optional[str] = None
    start_index: int = 1


def extract_video(job: FlowJob) -> dict:
    """Flow folder of one video; skipped when ``done.json`` exists. Returns its record."""
    done = job.out_dir / DONE
    if done.is_file():
        return dict(read_json(done), skipped=True)
    from ..data.video import DEFAULT_FRAME_TEMPLATE, count_frames, read_video_frames

    tmpl = job.frame_template or DEFAULT_FRAME_TEMPLATE
    n = count_frames(job.src, True, tmpl, job.start_index)
    frames = read_video_frames(job.src, range(n), tmpl, job.start_index)
    if len(frames) < 2:
        raise ValueError(f"{job.src}: {len(frames)} frame(s); flow needs at least 2")
    t0 = time.perf_counter()
    n_flow = write_flow(job.out_dir, to_gray(frames), job.method, job.bound)
    rec = {
        "src": str(job.src),
        "frames": int(len(frames)),
        "flow": n_flow,
        "method": job.method,
        "bound": job.bound,
        "seconds": time.perf_counter() - t0,
    }
    atomic_write_json(done, rec)
    return dict(rec, skipped=False)


def _run(job: FlowJob) -> dict:
    import os

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    try:
        import cv2

        cv2.setNumThreads(1)
    except ImportError:
        pass
    return extract_video(job)


def extract_all(jobs: Sequence[FlowJob], workers: int = 1, progress: bool = True) -> list:
    """Run ``jobs`` (in ``workers`` processes when > 1); records in ``jobs`` order."""
    out: list = [None] * len(jobs)
    with progress_bar(
        desc="tsm flow extract", total=len(jobs), unit="video", enabled=progress
    ) as bar:
        if workers <= 1:
            for i, j in enumerate(jobs):
                out[i] = _run(j)
                bar.update(1)
        else:
            with get_context("spawn").Pool(workers) as pool:
                for i, rec in enumerate(pool.imap(_run, jobs)):
                    out[i] = rec
                    bar.update(1)
    return out


def write_summary(out: Path, records: list, wall: float) -> Path:
    """``extract.json``: videos, flow fields, extraction seconds (sum over videos), wall time."""
    fresh = [r for r in records if not r.get("skipped")]
    return atomic_write_json(
        out / "extract.json",
        {
            "videos": len(records),
            "extracted": len(fresh),
            "skipped": len(records) - len(fresh),
            "flow_fields": sum(r["flow"] for r in records),
            "seconds_sum": sum(r["seconds"] for r in records),
            "seconds_per_field": (
                sum(r["seconds"] for r in records) / max(1, sum(r["flow"] for r in records))
            ),
            "wall_s": wall,
            "method": records[0]["method"] if records else None,
        },
    )
