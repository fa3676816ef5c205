"""Shared records of :mod:`ui.app.sources`: errors, model names, video reading at the working
resolution.

The app holds every video it shows in memory, so a video is decoded within
:class:`DecodeLimits`: frames whose shorter side exceeds the working resolution are downscaled
as they are decoded (never held at full size), and the number of frames kept is bounded by the
frame limit and by the decoded size (frames x pixels).
"""

from __future__ import annotations

from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Optional

import numpy as np

from tsm_apps.data.decoder import VideoDecodeError
from tsm_apps.data.vid_layout import VID_FRAME_TEMPLATE
from tsm_apps.data.video import count_frames, frame_stream, read_video_frames

from ...models import MODELS
from ..settings import DecodeLimits

Progress = Callable[[float], None]

__all__ = [
    "MODELS",
    "VID_FRAME_TEMPLATE",
    "Progress",
    "Unavailable",
    "VideoDecodeError",
    "DecodeLimits",
    "Decoded",
    "working_size",
    "read_video",
    "read_frames",
]


class Unavailable(RuntimeError):
    """Results the UI needs are absent; the message is for users."""


@dataclass(frozen=True)
class Decoded:
    """The first frames uint8 ``(T, H, W, 3)`` of a video at the working size, the video's
    length ``total`` (frames) and its own frame size ``source_size`` ``(W, H)``."""

    frames: np.ndarray
    total: int
    source_size: tuple = (0, 0)

    @property
    def cut(self) -> bool:
        return self.total > len(self.frames)

    @property
    def scale(self) -> float:
        """Working width over the source's width (1.0: decoded at full size)."""
        return self.frames.shape[2] / self.source_size[0] if self.source_size[0] else 1.0


def working_size(width: int, height: int, short_side: int) -> tuple[int, int]:
    """``(W, H)`` with the shorter side at most ``short_side``, aspect kept (even sizes when
    downscaled)."""
    if min(width, height) <= short_side:
        return width, height
    k = short_side / min(width, height)
    return max(2, 2 * round(width * k / 2)), max(2, 2 * round(height * k / 2))


def read_video(path: Path, max_frames: int, limits: Optional[DecodeLimits] = None) -> Decoded:
    """The first frames of a video file or of an ImageNet-VID snippet folder (``%06d.JPEG``,
    0-based) and the video's length: at most ``max_frames`` at full size, or within ``limits``
    (downscaled while decoding). Raises ``VideoDecodeError``."""
    path = Path(path)
    kw = dict(frame_template=VID_FRAME_TEMPLATE, start_index=0) if path.is_dir() else {}
    n = count_frames(path, **kw) if path.is_dir() else count_frames(path, exact=True)
    if n == 0:
        raise VideoDecodeError(
            path,
            "no frames named 000000.JPEG, 000001.JPEG, ..."
            if path.is_dir()
            else "video has zero frames",
        )
    if limits is None:
        frames = read_video_frames(path, range(min(n, max_frames)), **kw)
        return Decoded(frames, n, (frames.shape[2], frames.shape[1]))
    reader = frame_stream(path, **kw)
    return _decode(reader, n, limits, path)


def read_frames(path: Path, max_frames: int) -> np.ndarray:
    """The first ``max_frames`` frames uint8 ``(T, H, W, 3)`` at full size."""
    return read_video(path, max_frames).frames


# ----------------------------------------------------------------------------- decoding
Reader = Iterator  # yields (source (W, H), resize: (W, H) -> uint8 (H, W, 3)) per frame


def _decode(reader: Reader, total: int, limits: DecodeLimits, path: Path) -> Decoded:
    out, first, size, keep = [], None, None, total
    with closing(reader):  # the decoder is closed as soon as enough frames are read
        for source, resize in reader:
            if first is None:
                first, size = source, working_size(*source, limits.short_side)
                keep = min(total, limits.frames_for(*size))
            elif source != first:
                raise VideoDecodeError(
                    path,
                    f"frame {len(out)} is {source[0]}x{source[1]}, "
                    f"the first frame {first[0]}x{first[1]}",
                )
            out.append(resize(size))
            if len(out) >= keep:
                break
    if not out:
        raise VideoDecodeError(path, "no frame could be decoded")
    return Decoded(np.stack(out), total, first)
