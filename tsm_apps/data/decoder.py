"""The sparse decoder of video files (PyAV), and the error every video reader raises.

A video file's frames are uint8 RGB ``(H, W, 3)`` arrays, indexed 0-based in presentation
order. The container is demuxed once (packets only, no decoding; the result is cached per file
path, modification time and size) into a :class:`VideoIndex`: every frame's timestamp and which
frames are keyframes. :func:`decode_frames` then decodes only what it must: for each wanted
frame it seeks to the last keyframe at or before it when that keyframe lies ahead of the
current decoding position, then decodes forward.

PyAV is imported lazily (:func:`pyav`), so importing this module is cheap. The entry points for
files and frame folders alike are in :mod:`tsm_apps.data.video`.
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Union

import numpy as np

PathLike = Union[str, os.PathLike]

__all__ = [
    "VideoDecodeError",
    "VideoHeader",
    "VideoIndex",
    "check_frame",
    "check_rgb_frames",
    "decode_frames",
    "open_stream",
    "open_video",
    "pyav",
    "read_header",
    "set_decode_threads",
    "video_index",
]
_DECODE = {"threads": 0}  # sparse reads' decoder threads in this process (0: FFmpeg's choice)


def _rgb(x, ndim: int, layout: str, where: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype != np.uint8 or arr.ndim != ndim or arr.shape[-1] != 3:
        raise ValueError(f"{where} must be uint8 {layout} RGB, got {arr.dtype} {arr.shape}")
    return arr


def check_frame(frame, where: str = "a frame") -> np.ndarray:
    """``frame`` as one video frame, uint8 ``(H, W, 3)`` RGB; ValueError naming ``where`` and
    what it is otherwise."""
    return _rgb(frame, 3, "(H, W, 3)", where)


def check_rgb_frames(frames, where: str = "frames") -> np.ndarray:
    """``frames`` as uint8 ``(T, H, W, 3)`` RGB; ValueError naming ``where`` and what they are
    otherwise."""
    return _rgb(frames, 4, "(T, H, W, 3)", where)


def set_decode_threads(threads: int) -> None:
    """Decoder threads of :func:`~tsm_apps.data.video.read_video_frames` in this process: 0
    (default) lets FFmpeg choose (slice + frame threads, one per core: the fastest read of one
    video at a time); 1 for data-loading workers, where the workers are the parallelism (the
    same frames, less CPU a clip: ``benchmarks/bench_clip_cpu.py``)."""
    if threads < 0:
        raise ValueError(f"decoder threads must be >= 0, got {threads}")
    _DECODE["threads"] = int(threads)


class VideoDecodeError(RuntimeError):
    """A video or frame folder that cannot be read: ``VideoDecodeError(path, reason)``."""

    def __init__(self, path: PathLike, reason: str) -> None:
        self.path = Path(path)
        self.reason = str(reason)
        super().__init__(f"{self.path}: {self.reason}")

    def __reduce__(self):  # picklable across DataLoader workers
        return (type(self), (self.path, self.reason))


def pyav():
    """The ``av`` module (PyAV), imported on first use."""
    try:
        import av
    except ImportError as e:  # pragma: no cover - av is a declared dependency
        raise ImportError("reading video files needs PyAV: pip install av") from e
    return av


@dataclass(frozen=True)
class VideoIndex:
    """Timestamps (stream time base) of every frame in presentation order, and keyframe rows."""

    pts: tuple
    keyframes: tuple  # sorted frame indices of keyframes
    declared: int = 0  # frame count stated by the container (0: none)

    def __len__(self) -> int:
        return len(self.pts)


def open_video(path: Path, **options):
    """An open PyAV container of the video file ``path`` holding a video stream (close it);
    ``options``: PyAV's ``open`` options (e.g. ``stream_options``). :class:`VideoDecodeError`
    for a missing, empty or unreadable file or one without video."""
    av = pyav()
    if not path.exists():
        raise VideoDecodeError(path, "file not found")
    if path.stat().st_size == 0:
        raise VideoDecodeError(path, "file is empty (0 bytes)")
    try:
        container = av.open(str(path), mode="r", **options)
    except (av.FFmpegError, OSError, ValueError) as e:
        raise VideoDecodeError(path, f"cannot open: {e}") from None
    if not container.streams.video:
        container.close()
        raise VideoDecodeError(path, "no video stream (empty or audio-only file)")
    return container


@dataclass(frozen=True)
class VideoHeader:
    """A video stream's frame ``width`` and ``height`` (pixels) and its length ``frames``."""

    width: int
    height: int
    frames: int


# FFmpeg's stream probing decodes a frame unless told to skip them all (80 MB for one 8K frame)
_HEADER_ONLY = {"stream_options": [{"skip_frame": "all"}] * 16}


def read_header(path: Path) -> VideoHeader:
    """The size of the video file ``path`` before any frame is decoded: the first video
    stream's coded width and height and its frame count (the container's, else its packets
    counted); :class:`VideoDecodeError` for an unreadable file or a stream without a size."""
    path = Path(path)
    container = open_video(path, **_HEADER_ONLY)
    try:
        stream = container.streams.video[0]
        width, height = int(stream.codec_context.width), int(stream.codec_context.height)
        frames = int(stream.frames or 0)
    finally:
        container.close()
    if width <= 0 or height <= 0:
        raise VideoDecodeError(path, "the video stream states no frame size")
    return VideoHeader(width, height, frames or len(video_index(path)))


def open_stream(target: str, **kwargs):
    """An open PyAV container reading ``target``, a URL or a device (``kwargs``: PyAV's
    ``format``, ``options``, ``timeout``); PyAV's errors pass through for the caller to name
    the source (:mod:`tsm_apps.live.sources`)."""
    return pyav().open(target, mode="r", **kwargs)


def _build_index(path: Path) -> VideoIndex:
    av = pyav()
    container = open_video(path)
    try:
        stream = container.streams.video[0]
        declared = int(stream.frames or 0)
        rows = []
        for packet in container.demux(stream):
            if packet.size == 0 or getattr(packet, "is_discard", False):
                continue  # the end-of-stream flush; frames an edit list drops (never output)
            ts = packet.pts if packet.pts is not None else packet.dts
            rows.append((ts, bool(packet.is_keyframe)))
    except av.FFmpegError as e:
        raise VideoDecodeError(path, f"cannot demux: {e}") from None
    finally:
        container.close()
    if any(ts is None for ts, _ in rows):  # no timestamps: sequential decoding only
        return VideoIndex(tuple(range(len(rows))), (0,) if rows else (), declared)
    rows.sort(key=lambda r: r[0])
    keyframes = tuple(i for i, (_, k) in enumerate(rows) if k) or ((0,) if rows else ())
    return VideoIndex(tuple(ts for ts, _ in rows), keyframes, declared)


@lru_cache(maxsize=256)
def _cached_index(path: str, mtime_ns: int, size: int) -> VideoIndex:
    return _build_index(Path(path))


def video_index(path: Path) -> VideoIndex:
    """The (cached) :class:`VideoIndex` of the video file ``path``."""
    if not path.exists():
        raise VideoDecodeError(path, "file not found")
    st = path.stat()
    return _cached_index(str(path.resolve()), st.st_mtime_ns, st.st_size)


def forget_indexes() -> None:
    """Empty :func:`video_index`'s cache: the next call reads each container again."""
    _cached_index.cache_clear()


def decode_frames(path: Path, wanted: np.ndarray, index: VideoIndex) -> dict:
    """``{i: uint8 (H, W, 3) RGB}`` for the sorted unique frame indices ``wanted`` (each below
    ``len(index)``) of the video file ``path``; seeks only when it skips work."""
    av = pyav()
    pos = {ts: i for i, ts in enumerate(index.pts)}
    out: dict = {}
    container = open_video(path)
    try:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"  # slice + frame threads: ~2x on 2 cores, bit-exact output
        if _DECODE["threads"]:
            stream.codec_context.thread_count = _DECODE["threads"]
        frames, cur = None, -1  # cur: index of the last decoded frame
        for target in wanted.tolist():
            k = index.keyframes[max(bisect.bisect_right(index.keyframes, target) - 1, 0)]
            if frames is None or k > cur + 1 or target <= cur:
                container.seek(int(index.pts[k]), stream=stream, backward=True, any_frame=False)
                frames, cur = container.decode(stream), None
            while True:
                frame = next(frames, None)
                if frame is None:
                    raise VideoDecodeError(
                        path,
                        f"stream ended before frame {target} (the "
                        f"container lists {len(index)} frames): "
                        f"truncated or corrupt file",
                    )
                if cur is None:  # first frame after a seek: locate it by timestamp
                    ts = frame.pts if frame.pts is not None else frame.dts
                    cur = pos.get(ts, bisect.bisect_left(index.pts, ts) if ts is not None else k)
                else:
                    cur += 1
                if cur == target:
                    out[target] = frame.to_ndarray(format="rgb24")
                    break
                if cur > target:
                    raise VideoDecodeError(
                        path,
                        f"frame {target} could not be decoded (decoding resumed at frame {cur})",
                    )
    except av.FFmpegError as e:
        raise VideoDecodeError(path, f"decoding failed: {e}") from None
    finally:
        container.close()
    return out
