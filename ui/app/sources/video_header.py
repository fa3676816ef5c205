"""A video's size read from its container header, before any frame is decoded: what the app
checks an upload against (:class:`ui.app.settings.VideoLimits`) so that decoding it stays
within bounded memory."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tsm_apps.data.decoder import VideoDecodeError, pyav, video_index

__all__ = ["VideoHeader", "read_header"]
# FFmpeg's stream probing decodes a frame unless told to skip them all (80 MB for one 8K frame)
NO_DECODING = {"skip_frame": "all"}
MAX_STREAMS = 16


@dataclass(frozen=True)
class VideoHeader:
    """A video stream's frame ``width`` and ``height`` (pixels) and its length ``frames``."""

    width: int
    height: int
    frames: int


def read_header(path: Path) -> VideoHeader:
    """The header of the video file ``path``: the first video stream's coded size (PyAV's
    codec parameters, read with frame decoding switched off) and its frame count (the
    container's, else its packets counted without decoding). :class:`VideoDecodeError` for an unreadable file or a stream without a size."""
    path = Path(path)
    av = pyav()
    if not path.is_file() or path.stat().st_size == 0:
        raise VideoDecodeError(path, "file not found or empty")
    try:
        container = av.open(str(path), stream_options=[NO_DECODING] * MAX_STREAMS)
    except (av.FFmpegError, OSError, ValueError) as e:
        raise VideoDecodeError(path, f"cannot open: {e}") from None
    try:
        if not container.streams.video:
            raise VideoDecodeError(path, "no video stream (empty or audio-only file)")
        stream = container.streams.video[0]
        width, height = int(stream.codec_context.width), int(stream.codec_context.height)
        frames = int(stream.frames or 0)
    finally:
        container.close()
    if width <= 0 or height <= 0:
        raise VideoDecodeError(path, "the video stream states no frame size")
    return VideoHeader(width, height, frames or len(video_index(path)))
