"""A stream URL or a video file read on the server as a WebRTC video track.

:func:`server_track` plays a source opened by :func:`open_server_source` (any length, at its own
rate) to aiortc, so a URL, a file and the browser's camera all reach the Live view's models the
same way (:class:`ui.app.sources.live.Feed` on the frames that come back).
"""

from __future__ import annotations

import threading
import time
from typing import Any, Optional

__all__ = ["open_server_source", "server_track"]


def open_server_source(spec: str, policy: Any, max_side: Optional[int]) -> Any:
    """A URL (checked by ``policy``) or a video file, opened on the server to be played at its
    own rate; ValueError / VideoDecodeError in one line naming ``spec``."""
    from tsm_apps.live.sources import open_source

    return open_source(spec, policy, realtime=True, max_side=max_side)


def server_track(source: Any) -> Any:
    """``source`` (:func:`open_server_source`) as an aiortc video track: frames read on a thread
    at the source's own rate, the newest handed to WebRTC (older ones dropped); ``error`` holds
    the one line that ended it, if any."""
    import asyncio
    from fractions import Fraction

    import av
    from aiortc.mediastreams import MediaStreamError, MediaStreamTrack

    class _Track(MediaStreamTrack):
        kind = "video"

        def __init__(self) -> None:
            super().__init__()
            self.error: Optional[str] = None
            self._frame, self._ended, self._cond = None, False, threading.Condition()
            self._t0 = time.monotonic()
            threading.Thread(target=self._read, name="tsm-ui-source", daemon=True).start()

        def _read(self) -> None:
            frames = source.frames()
            try:
                for f in frames:
                    with self._cond:
                        if self.readyState != "live":
                            break
                        self._frame = f
                        self._cond.notify_all()
            except Exception as e:  # one line on the page, never a traceback
                self.error = str(e).splitlines()[0]
            finally:
                frames.close()
                with self._cond:
                    self._ended = True
                    self._cond.notify_all()

        def _next(self):
            with self._cond:
                self._cond.wait_for(lambda: self._frame is not None or self._ended, timeout=1.0)
                f, self._frame = self._frame, None
                return f, self._ended

        async def recv(self):
            while True:
                f, ended = await asyncio.get_running_loop().run_in_executor(None, self._next)
                if f is not None:
                    break
                if ended or self.readyState != "live":
                    self.stop()
                    raise MediaStreamError
            out = av.VideoFrame.from_ndarray(f.image, format="rgb24")
            out.pts = int((time.monotonic() - self._t0) * 90000)
            out.time_base = Fraction(1, 90000)
            return out

    return _Track()
