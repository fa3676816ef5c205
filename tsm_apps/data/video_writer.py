"""Writing video files: frames in, H.264 (MPEG-4 for avi) out, one frame at a time.

:class:`VideoWriter` encodes frames as they come (a live stream of any length is written in
constant memory) into a temporary file beside the target, renamed into place when it is closed
without error: a reader never sees half a file, and a failed write leaves any earlier file there
untouched. :func:`write_video` writes a whole array of frames with it.
"""

from __future__ import annotations

from contextlib import ExitStack
from fractions import Fraction
from pathlib import Path
from typing import Optional

import numpy as np

from ..io import atomic_path
from .decoder import PathLike, check_frame, check_rgb_frames, pyav

WRITE_FORMATS = {
    ".mp4": ("mp4", "libx264"),
    ".m4v": ("mp4", "libx264"),
    ".mov": ("mov", "libx264"),
    ".mkv": ("matroska", "libx264"),
    ".avi": ("avi", "mpeg4"),
}

__all__ = ["VideoWriter", "write_video", "WRITE_FORMATS"]


class VideoWriter:
    """Encode uint8 RGB frames ``(H, W, 3)`` to ``path`` at ``fps`` (H.264 yuv420p; MPEG-4 for
    avi). H and W must be even (4:2:0 chroma) and are fixed by the first frame.
    ``keyframe_interval`` frames between keyframes (default: one per second, so sparse reads
    can seek); ``crf`` 0 is lossless (decoded frames equal the frames after 4:2:0 chroma
    subsampling); ``threads``: encoder threads (None: the codec's choice). Use as a context
    manager: on a clean exit the file appears at ``path``; on an error the partial file is
    removed."""

    def __init__(
        self,
        path: PathLike,
        fps: float,
        crf: int = 18,
        preset: str = "veryfast",
        keyframe_interval: Optional[int] = None,
        threads: Optional[int] = None,
    ) -> None:
        self.path = Path(path)
        if self.path.suffix.lower() not in WRITE_FORMATS:
            raise ValueError(
                f"{self.path}: cannot write {self.path.suffix!r}; use one of {sorted(WRITE_FORMATS)}"
            )
        if not fps > 0:
            raise ValueError(f"{self.path}: fps must be > 0, got {fps}")
        self.rate = Fraction(fps).limit_denominator(1001)
        self.options = dict(crf=crf, preset=preset, gop=keyframe_interval, threads=threads)
        self.count = 0
        self._file = ExitStack()  # the temporary file (tsm_apps.io.atomic_path) until close
        self._tmp = self._file.enter_context(atomic_path(self.path))
        self._container = self._stream = None

    def _open(self, height: int, width: int) -> None:
        av = pyav()
        fmt, codec = WRITE_FORMATS[self.path.suffix.lower()]
        o = self.options
        opts = {"crf": str(o["crf"]), "preset": o["preset"]} if codec == "libx264" else {}
        self._container = av.open(str(self._tmp), mode="w", format=fmt)
        stream = self._container.add_stream(codec, rate=self.rate, options=opts)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.codec_context.gop_size = max(1, int(o["gop"] or round(float(self.rate))))
        if o["threads"] is not None:
            stream.codec_context.thread_count = int(o["threads"])
        if codec != "libx264":
            stream.codec_context.bit_rate = 8 * width * height * int(float(self.rate) + 1)
        self._stream = stream

    def write(self, frame: np.ndarray) -> None:
        """Encode one frame (the first fixes the size: ValueError naming a later one that
        differs)."""
        frame = check_frame(frame, f"{self.path}: a frame")
        h, w = frame.shape[:2]
        if self._stream is None:
            if h % 2 or w % 2:
                raise ValueError(
                    f"{self.path}: H.264 yuv420p needs an even width and height, got {w}x{h}; "
                    "crop or pad the frames"
                )
            self._open(h, w)
        elif (w, h) != (self._stream.width, self._stream.height):
            raise ValueError(
                f"{self.path}: frame {self.count} is {w}x{h}, the video is "
                f"{self._stream.width}x{self._stream.height}"
            )
        av = pyav()
        out = av.VideoFrame.from_ndarray(np.ascontiguousarray(frame), format="rgb24")
        out = out.reformat(format="yuv420p")
        out.pts, out.time_base = self.count, 1 / self.rate
        self._container.mux(self._stream.encode(out))
        self.count += 1

    def close(self) -> Path:
        """Flush, close and move the file into place; returns the path."""
        if self._container is None:
            self.abort()
            raise ValueError(f"{self.path}: no frames to write")
        self._container.mux(self._stream.encode(None))
        self._container.close()
        self._container = None
        self._file.close()
        return self.path

    def abort(self) -> None:
        """Drop the partial file (the target, if it existed, is left as it was)."""
        if self._container is not None:
            self._container.close()
            self._container = None
        err = RuntimeError("aborted")
        self._file.__exit__(type(err), err, None)

    def __enter__(self) -> "VideoWriter":
        return self

    def __exit__(self, kind, *exc) -> None:
        if kind is None:
            self.close()
        else:
            self.abort()


def write_video(
    path: PathLike,
    frames: np.ndarray,
    fps: float,
    crf: int = 18,
    preset: str = "veryfast",
    keyframe_interval: Optional[int] = None,
    threads: Optional[int] = None,
) -> Path:
    """Write uint8 RGB ``frames (T, H, W, 3)`` with a :class:`VideoWriter` (same options); the
    file appears atomically. Returns the path."""
    path = Path(path)
    frames = check_rgb_frames(frames, f"{path}: frames")
    if len(frames) == 0:
        raise ValueError(f"{path}: no frames to write")
    with VideoWriter(path, fps, crf, preset, keyframe_interval, threads) as writer:
        for frame in frames:
            writer.write(frame)
    return path
