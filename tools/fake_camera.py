"""A camera for headless Chromium: a clip written as Y4M, which Chromium plays (looped) as the
webcam when started with :data:`CAMERA_ARGS` + ``--use-file-for-fake-video-capture=FILE``."""

from __future__ import annotations

from pathlib import Path

import numpy as np

CAMERA_ARGS = ["--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream"]


def write_y4m(frames: np.ndarray, path: Path, fps: int = 25) -> Path:
    """uint8 RGB ``frames (T, H, W, 3)`` (even H and W) as a Y4M file (4:2:0) at ``fps``."""
    import av

    path = Path(path)
    with av.open(str(path), "w", format="yuv4mpegpipe") as out:
        stream = out.add_stream("rawvideo", rate=fps)
        stream.width, stream.height, stream.pix_fmt = frames.shape[2], frames.shape[1], "yuv420p"
        for f in frames:
            frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(f), format="rgb24")
            out.mux(stream.encode(frame.reformat(format="yuv420p")))
        out.mux(stream.encode(None))
    return path


def camera_args(clip: Path) -> list:
    """Chromium's arguments for a fake camera playing ``clip`` (.y4m)."""
    return CAMERA_ARGS + [f"--use-file-for-fake-video-capture={clip}"]
