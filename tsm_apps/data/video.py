"""Reading and writing video: the entry points for video files and pre-extracted frame folders.

Frames are uint8 RGB arrays ``(T, H, W, 3)``; frame indices are 0-based positions in
presentation order. A frame folder holds one image per frame named by a template
(``img_{:05d}.jpg`` and ``start_index=1`` by default, the official TSM layout; ImageNet-VID
snippets are ``{:06d}.JPEG`` from 0). printf templates (``img_%05d.jpg``) work too.

Writing is :mod:`tsm_apps.data.video_writer`'s. Sparse reads of a video file never decode the whole video (:mod:`tsm_apps.data.decoder`: the
keyframe index, seeking, decoder threads, :class:`VideoDecodeError`). PyAV is imported lazily,
so importing this module is cheap.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator, Optional

import numpy as np

from .decoder import PathLike, VideoDecodeError, decode_frames, open_video, pyav, video_index

DEFAULT_FRAME_TEMPLATE = "img_{:05d}.jpg"
DEFAULT_START_INDEX = 1

__all__ = [
    "read_video_frames",
    "frame_stream",
    "count_frames",
    "frame_rate",
    "DEFAULT_FRAME_TEMPLATE",
    "DEFAULT_START_INDEX",
]


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
        index = video_index(path)
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
        got = decode_frames(path, wanted, index)
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
    av = pyav()
    container = open_video(path)  # missing, empty, unreadable or without video: raised here
    try:
        with container:
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
        av = pyav()
        container = open_video(path)
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
    return len(video_index(path))


def frame_rate(path: PathLike) -> Optional[float]:
    """Frames per second that a video file's container states (None: a frame folder, or no
    rate stated). Raises :class:`VideoDecodeError` for a file that cannot be opened."""
    path = Path(path)
    if path.is_dir():
        return None
    container = open_video(path)
    try:
        rate = container.streams.video[0].average_rate
        return float(rate) if rate else None
    finally:
        container.close()
