"""The detectors' panels: a loaded detector, a frame with its boxes (and the ground truth)
drawn, its caption, and the ground-truth toggle; used by the Detection and the Live pages."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np
import streamlit as st

from ... import models
from .. import sources
from .draw import draw_boxes, upscale
from .video_source import ChosenVideo

MIN_DISPLAY_WIDTH = 320


@st.cache_resource(show_spinner="Loading detector...")
def detector(spec: sources.DetectorSpec, stamp: str):
    """The detector of ``spec`` (loaded once per server; ``stamp``: its files' state)."""
    return sources.load_detector(spec)


def render_frame(
    frame: np.ndarray,
    dets: sources.FrameDetections,
    name: str,
    truth: Optional[sources.FrameTruth] = None,
) -> np.ndarray:
    """The frame enlarged, ground truth (when given) in green, ``name``'s boxes in its colour."""
    big = upscale(frame, MIN_DISPLAY_WIDTH)
    k = big.shape[1] / frame.shape[1]
    if truth is not None and len(truth.labels):
        big = draw_boxes(big, truth.boxes * k, ["" for _ in truth.labels], color=models.GT_COLOR)
    return draw_boxes(big, dets.boxes * k, box_labels(dets), color=models.rgb(name))


def box_labels(dets: sources.FrameDetections) -> list[str]:
    """``'<class> <score>'`` of each box, as drawn on the frame."""
    return [f"{lb} {s:.2f}" for lb, s in zip(dets.labels, dets.scores)]


def panel_caption(
    name: str, i: int, num_frames: int, dets: sources.FrameDetections, extra: str = ""
) -> str:
    """``'TSM frame 2/5: 2 box(es) · <extra> — car 0.91, dog 0.40'``: every box drawn, best
    score first."""
    order = np.argsort(-np.asarray(dets.scores), kind="stable")
    labels = box_labels(dets)
    listed = ", ".join(labels[j] for j in order)
    return (
        f"{name} frame {i}/{num_frames - 1}: {len(labels)} box(es)"
        + (f" · {extra}" if extra else "")
        + (f" — {listed}" if listed else "")
    )


@st.cache_data(show_spinner=False, max_entries=8)
def _truth(path: Optional[str], num_frames: int, scale: float) -> Optional[list]:
    """The snippet's ground truth, boxes in the pixels of its frames at the working size."""
    truth = sources.read_truth(Path(path), num_frames) if path else None
    return None if truth is None else [g.scaled(scale) for g in truth]


def truth_toggle(video: ChosenVideo, key: str) -> Optional[list]:
    """The video's ground truth when it has annotations and the toggle (widget ``<key>_gt``)
    is on."""
    try:
        truth = _truth(str(video.path) if video.path else None, len(video.frames), video.scale)
    except ValueError as e:
        st.warning(f"Ground truth not shown: {e}")
        return None
    if truth is None:
        return None
    return truth if st.checkbox("Show ground-truth boxes (green)", True, key=f"{key}_gt") else None
