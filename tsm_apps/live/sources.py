"""Where live frames come from: a video file of any length, a frame folder, a network stream
(RTSP, HTTP(S) incl. HLS, UDP/RTP MPEG-TS, SRT, RTMP: anything FFmpeg reads, through PyAV) or a
local camera (V4L2, ``/dev/videoN`` or ``camera:N``).

:func:`open_source` names the source by its spec: a file or folder is checked at once (missing,
empty, unreadable: :class:`SourceError`), a URL against the
:class:`~tsm_apps.live.policy.StreamPolicy` (ValueError); a URL or a camera is opened only when
its frames are first asked for, on the thread that reads them, so one that does not answer holds
up no other. :func:`pump` feeds a source's frames to one or more
:class:`~tsm_apps.live.stream.LiveStream` (one per model) on a thread of its own. A live source
(a network stream, a camera, or a file played in real time) never waits for the model: the newest
frame replaces one not taken yet (counted as dropped). A file played as fast as the model goes
(the default for files) waits, so every frame is stepped. Frames are decoded one at a time and
forgotten once answered: memory does not grow with the length of the source.

Every failure ends the stream with one line naming the source (:class:`SourceError`): a URL that
does not answer within the connect time limit, a stream that stalls (no data for the read time
limit) or sends bytes FFmpeg cannot decode. A network stream or camera that ends is logged as
such (one line); the streams of other sources go on.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Sequence

import numpy as np

from ..data.decoder import VideoDecodeError, open_stream, open_video, pyav
from ..data.video import DEFAULT_FRAME_TEMPLATE, DEFAULT_START_INDEX, frame_stream
from .policy import StreamPolicy
from .stream import Frame, LiveStream, now

log = logging.getLogger(__name__)
_CAMERA = re.compile(r"^(?:camera:(\d+)|(/dev/video\d+))$")
KINDS = ("file", "folder", "url", "camera")
ANSWER_WAIT = 30.0  # s a failed source waits for the model to take its last frame


class SourceError(RuntimeError):
    """A source that cannot be opened or read: ``SourceError(name, reason)``, one line
    ``"<name>: <reason>"`` (the name as given: a URL stays as typed)."""

    def __init__(self, name: str, reason: str) -> None:
        self.name, self.reason = str(name), str(reason)
        super().__init__(f"{self.name}: {self.reason}")


@dataclass
class Source:
    """An opened source: ``name`` (as given), ``kind`` (:data:`KINDS`), ``live`` (frames are
    dropped rather than waited for), ``fps`` the rate it states (None if none; a URL's or a
    camera's is known once its first frame was read). :meth:`frames` reads it."""

    name: str
    kind: str
    live: bool
    fps: Optional[float]
    reader: Callable[["Source"], Iterator[Frame]] = field(repr=False)

    def frames(self) -> Iterator[Frame]:
        """A generator of the source's :class:`~tsm_apps.live.stream.Frame` (a URL or camera is
        opened at the first ``next``; a file played live comes at its own rate); close it to
        release the decoder. Raises :class:`SourceError`."""
        frames = self.reader(self)
        return _paced(frames, self.fps) if self.live and self.kind == "file" else frames


def _scaled(width: int, height: int, max_side: Optional[int]) -> tuple:
    """``(w, h)`` with the longer side at most ``max_side`` (aspect kept, even sizes)."""
    if not max_side or max(width, height) <= max_side:
        return width, height
    s = max_side / max(width, height)
    return max(2, int(width * s) // 2 * 2), max(2, int(height * s) // 2 * 2)


def _reason(e: Exception, limit: Optional[float] = None) -> str:
    """One line for an FFmpeg/OS error; ``limit``: the time limit whose expiry it may be."""
    av = pyav()
    text = str(getattr(e, "strerror", None) or e).strip() or type(e).__name__
    if isinstance(e, (av.ExitError, TimeoutError)) or "timed out" in text.lower():
        within = f" within {limit:g} s" if limit else ""
        return f"no data{within} (the stream does not answer or stalled)"
    return text.splitlines()[0]


def _decode(container: Any, name: str, max_side: Optional[int], limit: float) -> Iterator[Frame]:
    """Every frame of ``container``'s first video stream as a :class:`Frame`; the container is
    closed when the generator ends or is closed. FFmpeg's errors become :class:`SourceError`."""
    av = pyav()
    try:
        stream = container.streams.video[0]
        for i, f in enumerate(container.decode(stream)):
            w, h = _scaled(f.width, f.height, max_side)
            image = f.to_ndarray(width=w, height=h, format="rgb24", interpolation="AREA")
            pts = float(f.pts * f.time_base) if f.pts is not None and f.time_base else None
            yield Frame(image, i, pts, now())
    except (av.FFmpegError, OSError) as e:
        raise SourceError(name, f"reading failed: {_reason(e, limit)}") from None
    finally:
        container.close()


def _open_av(name: str, target: str, limit: float, **kwargs: Any) -> Any:
    av = pyav()
    try:
        container = open_stream(target, **kwargs)
    except (av.FFmpegError, OSError, ValueError) as e:
        raise SourceError(name, f"cannot open: {_reason(e, limit)}") from None
    if not container.streams.video:
        container.close()
        raise SourceError(name, "no video stream")
    return container


def _rate(container: Any) -> Optional[float]:
    rate = container.streams.video[0].average_rate
    return float(rate) if rate else None


def _file_reader(path: Path, max_side: Optional[int]) -> Callable:
    def read(source: Source) -> Iterator[Frame]:
        try:
            container = open_video(path)
        except VideoDecodeError as e:  # removed or replaced since it was checked
            raise SourceError(source.name, e.reason) from None
        container.streams.video[0].thread_type = "AUTO"  # throughput: nobody waits on a file
        yield from _decode(container, source.name, max_side, 0.0)

    return read


def _stream_reader(target: str, options: dict, policy: StreamPolicy, max_side, fmt=None):
    """A URL's or camera's frames, opened at the first ``next`` (decoded without frame threads:
    a frame comes out as soon as its packet is in)."""

    def read(source: Source) -> Iterator[Frame]:
        kw = {"format": fmt} if fmt else {}
        c = _open_av(
            source.name,
            target,
            policy.connect_timeout,
            options=options,
            timeout=(policy.connect_timeout, policy.read_timeout),
            **kw,
        )
        source.fps = _rate(c)
        yield from _decode(c, source.name, max_side, policy.read_timeout)

    return read


def _folder_reader(path: Path) -> Callable:
    def read(source: Source) -> Iterator[Frame]:
        try:
            for i, (size, pixels) in enumerate(frame_stream(path)):
                yield Frame(np.array(pixels(size)), i, None, now())  # PIL's view is read-only
        except (VideoDecodeError, OSError) as e:
            raise SourceError(source.name, getattr(e, "reason", None) or str(e)) from None

    return read


def open_source(
    spec: str,
    policy: StreamPolicy = StreamPolicy(),
    realtime: bool = False,
    max_side: Optional[int] = None,
) -> Source:
    """The source ``spec`` names: a URL (``scheme://``, checked by ``policy``), ``camera:N`` or
    ``/dev/videoN``, a frame folder (``img_00001.jpg``, ...) or a video file. ``realtime``: a
    file is played at its own rate (and drops frames the model cannot keep up with) instead of
    as fast as the model goes. ``max_side``: frames larger than this are decoded downscaled
    (aspect kept). A missing or unreadable file or folder: :class:`SourceError`; a URL the
    policy refuses: ValueError; both one line naming ``spec``."""
    cam = _CAMERA.match(spec)
    if cam:
        device = cam.group(2) or f"/dev/video{cam.group(1)}"
        if not Path(device).exists():
            raise SourceError(spec, f"no camera at {device}")
        return Source(
            spec, "camera", True, None, _stream_reader(device, {}, policy, max_side, "v4l2")
        )
    if "://" in spec:
        url, options = policy.check(spec)
        return Source(spec, "url", True, None, _stream_reader(url, options, policy, max_side))
    path = Path(spec).absolute()  # FFmpeg never reads a path as a protocol ("concat:...")
    if path.is_dir():
        first, second = (DEFAULT_FRAME_TEMPLATE.format(DEFAULT_START_INDEX + i) for i in (0, 1))
        if not (path / first).is_file():
            raise SourceError(spec, f"no {first} in the folder (frames {first}, {second}, ...)")
        return Source(spec, "folder", False, None, _folder_reader(path))
    try:
        with open_video(path) as c:  # missing, empty, unreadable, no video
            fps = _rate(c)
    except VideoDecodeError as e:
        raise SourceError(spec, e.reason) from None
    return Source(spec, "file", realtime, fps, _file_reader(path, max_side))


def _paced(frames: Iterator[Frame], fps: Optional[float]) -> Iterator[Frame]:
    """``frames`` released at the source's own rate (by timestamp, else by ``fps``); closing
    it closes ``frames``."""
    t0 = first = None
    try:
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
    finally:
        frames.close()


def pump(
    source: Source,
    streams: Sequence[LiveStream],
    max_frames: Optional[int] = None,
) -> threading.Thread:
    """Feed ``source``'s frames to ``streams`` (the same frame to each: one stream per model)
    on a new thread, until the source ends, ``max_frames`` were read, or every stream closed.
    Each stream then ends; if the source failed, its one-line error is set once the model
    took the frames received before (a stream with an error is no longer stepped)."""

    def run() -> None:
        error, count = None, 0
        frames = source.frames()
        try:
            for frame in frames:
                count += 1
                sent = [s.submit(frame, block=not source.live) for s in streams]
                if not any(sent) or (max_frames is not None and count >= max_frames):
                    break
            else:
                if source.kind in ("url", "camera"):
                    log.info("%s: the stream ended after %d frames", source.name, count)
        except SourceError as e:
            error = str(e)
        except Exception as e:  # a source must never take the process down: one line
            error = f"{source.name}: {type(e).__name__}: {e}"
        finally:
            frames.close()
            for s in streams:  # no more frames; the one waiting is still answered ...
                s.end()
            for s in streams:
                s.wait_done(timeout=ANSWER_WAIT)
            if error is not None:  # ... before the stream is marked failed
                for s in streams:
                    s.end(error)

    thread = threading.Thread(target=run, name=f"tsm-source-{source.kind}", daemon=True)
    thread.start()
    return thread
