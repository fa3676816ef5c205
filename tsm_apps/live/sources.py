"""Where live frames come from: a video file of any length, a frame folder, a network stream
(RTSP, HTTP(S) incl. HLS, UDP/RTP MPEG-TS, SRT, RTMP: anything FFmpeg reads, through PyAV) or a
local camera (V4L2, ``/dev/videoN`` or ``camera:N``).

:func:`open_source` names the source by its spec; :func:`pump` feeds its frames to one or more
:class:`~tsm_apps.live.stream.LiveStream` (one per model) on a thread of its own. A live source
(a network stream, a camera, or a file played in real time) never waits for the model: the newest
frame replaces one not taken yet (counted as dropped). A file played as fast as the model goes
(the default for files) waits, so every frame is stepped. Frames are decoded one at a time and
forgotten once answered: memory does not grow with the length of the source.

Every failure ends the stream with one line naming the source: a URL refused by the
:class:`~tsm_apps.live.policy.StreamPolicy`, one that does not answer within the connect time
limit, a stream that stalls (no data for the read time limit), ends, or sends bytes FFmpeg cannot
decode.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Optional, Sequence

from ..data.decoder import VideoDecodeError, open_video, pyav
from ..data.video import frame_stream
from .policy import StreamPolicy
from .stream import Frame, LiveStream, now

_CAMERA = re.compile(r"^(?:camera:(\d+)|(/dev/video\d+))$")
KINDS = ("file", "folder", "url", "camera")


@dataclass
class Source:
    """An opened source: ``name`` (as given), ``kind`` (:data:`KINDS`), ``live`` (frames are
    dropped rather than waited for), ``fps`` the rate it states (None if none) and ``frames()``,
    the generator of its :class:`~tsm_apps.live.stream.Frame` (close it to release the
    decoder)."""

    name: str
    kind: str
    live: bool
    fps: Optional[float]
    frames: Callable[[], Iterator[Frame]]


def _scaled(width: int, height: int, max_side: Optional[int]) -> tuple:
    """``(w, h)`` with the longer side at most ``max_side`` (aspect kept, even sizes)."""
    if not max_side or max(width, height) <= max_side:
        return width, height
    s = max_side / max(width, height)
    return max(2, int(width * s) // 2 * 2), max(2, int(height * s) // 2 * 2)


def _decode(container, name: str, max_side: Optional[int]) -> Iterator[Frame]:
    """Every frame of ``container``'s first video stream as a :class:`Frame`; the container is
    closed when the generator ends or is closed. FFmpeg's errors become one-line
    :class:`VideoDecodeError`."""
    av = pyav()
    try:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        for i, f in enumerate(container.decode(stream)):
            w, h = _scaled(f.width, f.height, max_side)
            image = f.to_ndarray(width=w, height=h, format="rgb24", interpolation="AREA")
            pts = float(f.pts * f.time_base) if f.pts is not None and f.time_base else None
            yield Frame(image, i, pts, now())
    except (av.FFmpegError, OSError) as e:
        raise VideoDecodeError(name, _reason(e)) from None
    finally:
        container.close()


def _reason(e: Exception) -> str:
    text = str(getattr(e, "strerror", None) or e).strip() or type(e).__name__
    if isinstance(e, TimeoutError) or "timed out" in text.lower() or "Immediate exit" in text:
        return "no data within the time limit (the stream stalled or does not answer)"
    return f"decoding failed: {text.splitlines()[0]}"


def _open_av(name: str, what: str, **kwargs):
    av = pyav()
    try:
        container = av.open(what, mode="r", **kwargs)
    except (av.FFmpegError, OSError) as e:
        raise VideoDecodeError(
            name, f"cannot open: {_reason(e).removeprefix('decoding failed: ')}"
        ) from None
    if not container.streams.video:
        container.close()
        raise VideoDecodeError(name, "no video stream")
    return container


def _rate(container) -> Optional[float]:
    rate = container.streams.video[0].average_rate
    return float(rate) if rate else None


def _folder(path: Path) -> Iterator[Frame]:
    for i, (size, read) in enumerate(frame_stream(path)):
        yield Frame(read(size), i, None, now())


def open_source(
    spec: str,
    policy: StreamPolicy = StreamPolicy(),
    realtime: bool = False,
    max_side: Optional[int] = None,
) -> Source:
    """The source ``spec`` names, opened: a URL (checked by ``policy``), ``camera:N`` or
    ``/dev/videoN``, a frame folder or a video file. ``realtime``: a file is played at its
    own rate (and drops frames the model cannot keep up with) instead of as fast as the
    model goes. ``max_side``: frames larger than this are decoded downscaled (aspect kept).
    Raises ValueError / :class:`VideoDecodeError` with one line naming ``spec``."""
    cam = _CAMERA.match(spec)
    if cam:
        device = cam.group(2) or f"/dev/video{cam.group(1)}"
        if not Path(device).exists():
            raise VideoDecodeError(spec, f"no camera at {device}")
        c = _open_av(spec, device, format="v4l2")
        return Source(spec, "camera", True, _rate(c), lambda: _decode(c, spec, max_side))
    if "://" in spec:
        url, options = policy.check(spec)
        timeout = (policy.connect_timeout, policy.read_timeout)
        c = _open_av(spec, url, options=options, timeout=timeout)
        return Source(spec, "url", True, _rate(c), lambda: _decode(c, spec, max_side))
    path = Path(spec)
    if path.is_dir():
        return Source(spec, "folder", False, None, lambda: _folder(path))
    c = open_video(path)  # missing, empty, unreadable, no video: one line naming the file
    return Source(spec, "file", realtime, _rate(c), lambda: _decode(c, spec, max_side))


def _paced(frames: Iterator[Frame], fps: Optional[float]) -> Iterator[Frame]:
    """``frames`` released at the source's own rate (by timestamp, else by ``fps``)."""
    t0 = first = None
    for k, f in enumerate(frames):
        at = f.pts if f.pts is not None else (k / fps if fps else None)
        if at is not None:
            if t0 is None:
                t0, first = time.monotonic(), at
            wait = (at - first) - (time.monotonic() - t0)
            if wait > 0:
                time.sleep(wait)
        f.captured = now()
        yield f


def pump(
    source: Source,
    streams: Sequence[LiveStream],
    max_frames: Optional[int] = None,
) -> threading.Thread:
    """Feed ``source``'s frames to ``streams`` (the same frame to each: one stream per model)
    on a new thread, until the source ends, ``max_frames`` were read, or every stream closed.
    Each stream then ends, with the source's one-line error if it failed."""

    def run() -> None:
        error = None
        inner = source.frames()
        frames = _paced(inner, source.fps) if source.live and source.kind == "file" else inner
        try:
            for k, frame in enumerate(frames):
                if max_frames is not None and k >= max_frames:
                    break
                sent = [s.submit(frame, block=not source.live) for s in streams]
                if not any(sent):
                    break
        except VideoDecodeError as e:
            error = str(e)
        except Exception as e:  # a source must never take the process down: one line
            error = f"{source.name}: {type(e).__name__}: {e}"
        finally:
            frames.close()
            inner.close()
            for s in streams:
                s.end(error)

    thread = threading.Thread(target=run, name=f"tsm-source-{source.kind}", daemon=True)
    thread.start()
    return thread
