"""Reading and writing video: files decoded with PyAV, and pre-extracted frame folders.

Frames are uint8 RGB arrays ``(T, H, W, 3)``; frame indices are 0-based positions in
presentation order. A frame folder holds one image per frame named by a template
(``img_{:05d}.jpg`` and ``start_index=1`` by default, the official TSM layout; ImageNet-VID
snippets are ``{:06d}.JPEG`` from 0). printf templates (``img_%05d.jpg``) work too.

Sparse reads never decode a whole video: the container is demuxed once (packets only, no
decoding; the result is cached per file) to learn every frame's timestamp and which frames are
keyframes. For each wanted frame the reader seeks to the last keyframe at or before it when
that keyframe lies ahead of the current decoding position, then decodes forward.

PyAV is imported lazily, so importing this module is cheap.
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Iterator, Optional, Union

import numpy as np

from ..io import atomic_path

PathLike = Union[str, os.PathLike]
DEFAULT_FRAME_TEMPLATE = "img_{:05d}.jpg"
DEFAULT_START_INDEX = 1
_WRITE_FORMATS = {
    ".mp4": ("mp4", "libx264"),
    ".m4v": ("mp4", "libx264"),
    ".mov": ("mov", "libx264"),
    ".mkv": ("matroska", "libx264"),
    ".avi": ("avi", "mpeg4"),
}

__all__ = [
    "VideoDecodeError",
    "read_video_frames",
    "frame_stream",
    "count_frames",
    "frame_rate",
    "write_video",
    "set_decode_threads",
    "DEFAULT_FRAME_TEMPLATE",
    "DEFAULT_START_INDEX",
]
_DECODE = {"threads": 0}  # sparse reads' decoder threads in this process (0: FFmpeg's choice)


def set_decode_threads(threads: int) -> None:
    """Decoder threads of :func:`read_video_frames` in this process: 0 (default) lets FFmpeg
    choose (slice + frame threads, one per core: the fastest read of one video at a time); 1
    for data-loading workers, where the workers are the parallelism (the same frames, less CPU
    a clip: ``benchmarks/bench_clip_cpu.py``)."""
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


def _av():
    try:
        import av
    except ImportError as e:  # pragma: no cover - av is a declared dependency
        raise ImportError("reading video files needs PyAV: pip install av") from e
    return av


# ----------------------------------------------------------------------------- frame folders
def _frame_name(template: str, number: int) -> str:
    return template % number if "%" in template and "{" not in template else template.format(number)


def _count_folder(path: Path, template: str, start_index: int) -> int:
    n = 0
    while (path / _frame_name(template, start_index + n)).is_file():
        n += 1
    return n


def _read_folder(path: Path, wanted: np.ndarray, template: str, start_index: int) -> dict:
    from PIL import Image, UnidentifiedImageError

    out, shape = {}, None
    for i in wanted.tolist():
        f = path / _frame_name(template, start_index + i)
        if not f.is_file():
            n = _count_folder(path, template, start_index)
            raise VideoDecodeError(
                path,
                f"frame {i} ({f.name}) is missing; the folder holds "
                f"{n} consecutive frames named like "
                f"{_frame_name(template, start_index)}",
            )
        try:
            with Image.open(f) as im:
                arr = np.asarray(im.convert("RGB"), dtype=np.uint8)
        except (UnidentifiedImageError, OSError, SyntaxError) as e:
            raise VideoDecodeError(path, f"frame {i} ({f.name}) cannot be decoded: {e}") from None
        if shape is not None and arr.shape != shape:
            raise VideoDecodeError(
                path,
                f"frame {i} ({f.name}) is {arr.shape[1]}x{arr.shape[0]}, "
                f"earlier frames are {shape[1]}x{shape[0]}",
            )
        shape = arr.shape
        out[i] = arr
    return out


# ----------------------------------------------------------------------------- video files
@dataclass(frozen=True)
class _Index:
    """Timestamps (stream time base) of every frame in presentation order, and keyframe rows."""

    pts: tuple
    keyframes: tuple  # sorted frame indices of keyframes
    declared: int = 0  # frame count stated by the container (0: none)

    def __len__(self) -> int:
        return len(self.pts)


def _open(path: Path):
    av = _av()
    if not path.exists():
        raise VideoDecodeError(path, "file not found")
    if path.stat().st_size == 0:
        raise VideoDecodeError(path, "file is empty (0 bytes)")
    try:
        container = av.open(str(path), mode="r")
    except (av.FFmpegError, OSError, ValueError) as e:
        raise VideoDecodeError(path, f"cannot open: {e}") from None
    if not container.streams.video:
        container.close()
        raise VideoDecodeError(path, "no video stream (empty or audio-only file)")
    return container


def _build_index(path: Path) -> _Index:
    av = _av()
    container = _open(path)
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
        return _Index(tuple(range(len(rows))), (0,) if rows else (), declared)
    rows.sort(key=lambda r: r[0])
    keyframes = tuple(i for i, (_, k) in enumerate(rows) if k) or ((0,) if rows else ())
    return _Index(tuple(ts for ts, _ in rows), keyframes, declared)


@lru_cache(maxsize=256)
def _cached_index(path: str, mtime_ns: int, size: int) -> _Index:
    return _build_index(Path(path))


def _index(path: Path) -> _Index:
    if not path.exists():
        raise VideoDecodeError(path, "file not found")
    st = path.stat()
    return _cached_index(str(path.resolve()), st.st_mtime_ns, st.st_size)


def _decode_file(path: Path, wanted: np.ndarray, index: _Index) -> dict:
    """Decode the sorted unique frame indices ``wanted``; seek only when it skips work."""
    av = _av()
    pos = {ts: i for i, ts in enumerate(index.pts)}
    out: dict = {}
    container = _open(path)
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


# ----------------------------------------------------------------------------- public API
def _as_indices(indices: Iterable[int], path: Path) -> np.ndarray:
    idx = np.asarray(list(indices) if not isinstance(indices, np.ndarray) else indices)
    if idx.ndim != 1:
        raise ValueError(f"{path}: frame indices must be 1-D, got shape {idx.shape}")
    if idx.size and not np.issubdtype(idx.dtype, np.integer):
        raise TypeError(f"{path}: frame indices must be integers, got {idx.dtype}")
    idx = idx.astype(np.int64)
    if idx.size and idx.min() < 0:
        raise ValueError(f"{path}: frame indices must be >= 0, got {int(idx.min())}")
    return idx


def read_video_frames(
    path: PathLike,
    indices: Iterable[int],
    frame_template: Optional[str] = None,
    start_index: int = DEFAULT_START_INDEX,
) -> np.ndarray:
    """Frames ``indices`` (0-based, any order, repeats allowed) of a video file or frame folder.

    Returns uint8 ``(len(indices), H, W, 3)`` RGB in request order. A folder's frame ``i`` is the
    file ``frame_template.format(start_index + i)``. Raises :class:`VideoDecodeError` (naming the
    file and the reason) for missing, corrupt, truncated or zero-frame input and for an index
    beyond the last frame.
    """
    path = Path(path)
    idx = _as_indices(indices, path)
    if idx.size == 0:
        raise ValueError(f"{path}: no frame indices requested")
    wanted = np.unique(idx)
    if path.is_dir():
        got = _read_folder(path, wanted, frame_template or DEFAULT_FRAME_TEMPLATE, start_index)
    else:
        index = _index(path)
        if len(index) == 0:
            raise VideoDecodeError(path, "video has zero frames")
        if wanted[-1] >= len(index):
            note = (
                f"; the container lists {index.declared} (truncated file or edit list?)"
                if index.declared > len(index)
                else ""
            )
            raise VideoDecodeError(
                path,
                f"frame {int(wanted[-1])} requested but the video has "
                f"{len(index)} frames (0..{len(index) - 1}){note}",
            )
        got = _decode_file(path, wanted, index)
    return np.stack([got[i] for i in idx.tolist()])


def frame_stream(
    path: PathLike, frame_template: Optional[str] = None, start_index: int = DEFAULT_START_INDEX
) -> Iterator[tuple]:
    """Every frame of a video file or frame folder, in order, decoded lazily: yields
    ``((W, H), resize)`` per frame, ``resize((w, h))`` giving it as uint8 ``(h, w, 3)`` RGB
    (area-averaged: FFmpeg's AREA for files, PIL's BOX for folders; unchanged at ``(W, H)``),
    so a long video can be held downscaled without ever holding it at full size. Close the
    generator to release the decoder. Raises :class:`VideoDecodeError`."""
    path = Path(path)
    if path.is_dir():
        yield from _folder_stream(path, frame_template or DEFAULT_FRAME_TEMPLATE, start_index)
        return
    av = _av()
    try:
        with av.open(str(path)) as container:
            if not container.streams.video:
                raise VideoDecodeError(path, "no video stream (empty or audio-only file)")
            stream = container.streams.video[0]
            stream.thread_type = "AUTO"
            for frame in container.decode(stream):
                yield (
                    (frame.width, frame.height),
                    lambda size, f=frame: f.to_ndarray(
                        width=size[0], height=size[1], format="rgb24", interpolation="AREA"
                    ),
                )
    except (av.FFmpegError, OSError, ValueError) as e:
        raise VideoDecodeError(path, f"decoding failed ({type(e).__name__})") from None


def _folder_stream(path: Path, template: str, start_index: int) -> Iterator[tuple]:
    from PIL import Image

    t = start_index
    while (path / _frame_name(template, t)).is_file():
        with Image.open(path / _frame_name(template, t)) as img:
            img = img.convert("RGB")
        yield (
            img.size,
            lambda size, im=img: np.asarray(
                im if im.size == tuple(size) else im.resize(size, Image.Resampling.BOX)
            ),
        )
        t += 1


def count_frames(
    path: PathLike,
    exact: bool = False,
    frame_template: Optional[str] = None,
    start_index: int = DEFAULT_START_INDEX,
) -> int:
    """Number of frames of a video file or frame folder.

    Folders: consecutive files ``frame_template.format(start_index + i)`` present from ``i = 0``.
    Files: the container's frame count (or duration x rate) when ``exact`` is False and the
    container states one; otherwise the number of video packets (demuxed, not decoded).
    """
    path = Path(path)
    if path.is_dir():
        return _count_folder(path, frame_template or DEFAULT_FRAME_TEMPLATE, start_index)
    if not exact:
        av = _av()
        container = _open(path)
        try:
            s = container.streams.video[0]
            if s.frames:
                return int(s.frames)
            if s.duration is not None and s.time_base and s.average_rate:
                return int(round(float(s.duration * s.time_base * s.average_rate)))
        except av.FFmpegError as e:
            raise VideoDecodeError(path, f"cannot read the container: {e}") from None
        finally:
            container.close()
    return len(_index(path))


def frame_rate(path: PathLike) -> Optional[float]:
    """Frames per second that a video file's container states (None: a frame folder, or no
    rate stated). Raises :class:`VideoDecodeError` for a file that cannot be opened."""
    path = Path(path)
    if path.is_dir():
        return None
    container = _open(path)
    try:
        rate = container.streams.video[0].average_rate
        return float(rate) if rate else None
    finally:
        container.close()


def write_video(
    path: PathLike,
    frames: np.ndarray,
    fps: float,
    crf: int = 18,
    preset: str = "veryfast",
    keyframe_interval: Optional[int] = None,
    threads: Optional[int] = None,
) -> Path:
    """Write uint8 RGB ``frames (T, H, W, 3)`` as H.264 yuv420p (mp4/mov/mkv; MPEG-4 for avi).

    ``keyframe_interval`` frames between keyframes (default: one per second, so sparse reads
    can seek); ``crf`` 0 is lossless (decoded frames equal the frames after 4:2:0 chroma
    subsampling); ``threads``: encoder threads (None: the codec's choice). H and W must be even
    (4:2:0 chroma). The file appears atomically (written to a temporary file in the same
    folder, then renamed). Returns the path.
    """
    path = Path(path)
    frames = np.asarray(frames)
    if frames.dtype != np.uint8 or frames.ndim != 4 or frames.shape[-1] != 3:
        raise ValueError(
            f"{path}: frames must be uint8 (T, H, W, 3), got {frames.dtype} {frames.shape}"
        )
    t, h, w = frames.shape[:3]
    if t == 0:
        raise ValueError(f"{path}: no frames to write")
    if h % 2 or w % 2:
        raise ValueError(
            f"{path}: H.264 yuv420p needs an even width and height, got {w}x{h}; "
            f"crop or pad the frames"
        )
    if path.suffix.lower() not in _WRITE_FORMATS:
        raise ValueError(
            f"{path}: cannot write {path.suffix!r}; use one of {sorted(_WRITE_FORMATS)}"
        )
    if not fps > 0:
        raise ValueError(f"{path}: fps must be > 0, got {fps}")
    fmt, codec = _WRITE_FORMATS[path.suffix.lower()]
    with atomic_path(path) as tmp:
        _encode(tmp, frames, fps, fmt, codec, crf, preset, keyframe_interval, threads)
    return path


def _encode(
    tmp: Path,
    frames: np.ndarray,
    fps: float,
    fmt: str,
    codec: str,
    crf: int,
    preset: str,
    keyframe_interval: Optional[int],
    threads: Optional[int],
) -> None:
    av = _av()
    rate = Fraction(fps).limit_denominator(1001)
    options = {"crf": str(crf), "preset": preset} if codec == "libx264" else {}
    with av.open(str(tmp), mode="w", format=fmt) as container:
        stream = container.add_stream(codec, rate=rate, options=options)
        stream.width, stream.height = frames.shape[2], frames.shape[1]
        stream.pix_fmt = "yuv420p"
        stream.codec_context.gop_size = max(1, int(keyframe_interval or round(float(rate))))
        if threads is not None:
            stream.codec_context.thread_count = int(threads)
        if codec != "libx264":
            pixels = frames.shape[1] * frames.shape[2]
            stream.codec_context.bit_rate = 8 * pixels * int(float(rate) + 1)
        for t, arr in enumerate(frames):
            frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(arr), format="rgb24")
            frame = frame.reformat(format="yuv420p")
            frame.pts, frame.time_base = t, 1 / rate
            container.mux(stream.encode(frame))
        container.mux(stream.encode(None))
