"""Shared records of :mod:`ui.app.sources`: errors, model names, video reading."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from tsm_apps.data.video import VideoDecodeError, count_frames, read_video_frames

VID_FRAME_TEMPLATE = "{:06d}.JPEG"
MODELS = ("TSN", "TSM")
Progress = Callable[[float], None]


class Unavailable(RuntimeError):
    """Results the UI needs are absent; the message is for users."""


@dataclass(frozen=True)
class Decoded:
    """The first frames uint8 ``(T, H, W, 3)`` of a video and its length ``total`` (frames);
    ``cut``: the frame limit left frames out."""
    frames: np.ndarray
    total: int

    @property
    def cut(self) -> bool:
        return self.total > len(self.frames)


def read_video(path: Path, max_frames: int) -> Decoded:
    """The first ``max_frames`` frames of a video file or of an ImageNet-VID snippet folder
    (``%06d.JPEG``, 0-based) and the video's length. Raises ``VideoDecodeError``."""
    path = Path(path)
    kw = dict(frame_template=VID_FRAME_TEMPLATE, start_index=0) if path.is_dir() else {}
    n = count_frames(path, **kw) if path.is_dir() else count_frames(path, exact=True)
    if n == 0:
        raise VideoDecodeError(path, "no frames named 000000.JPEG, 000001.JPEG, ..."
                               if path.is_dir() else "video has zero frames")
    return Decoded(read_video_frames(path, range(min(n, max_frames)), **kw), n)


def read_frames(path: Path, max_frames: int) -> np.ndarray:
    """The first ``max_frames`` frames uint8 ``(T, H, W, 3)`` (see :func:`read_video`)."""
    return read_video(path, max_frames).frames
