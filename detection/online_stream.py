"""The detector's position in a test video and the state it carries: ``tsm detect test`` streams
each video through the online backbone one frame at a time, in video order.

:class:`TestStream` is owned by :class:`~detection.detector.ClipRFCN` (``test_stream``): the
video and frame id it is at and the backbone's :class:`~tsm_apps.models.ShiftState`. A frame
starts from empty (zero) state when ``video`` changes, ``frame_id`` does not increase, or
``frame_id`` skips frames (``gap='reset'``; ``'raise'`` refuses with ``ValueError``). Each data
sample's metainfo must hold ``video`` (any hashable id) and ``frame_id`` (int).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from torch import Tensor

from tsm_apps.models.shift.state import ShiftState

STREAM_GAPS = ("reset", "raise")
STREAM_META_KEYS = ("video", "frame_id")


class TestStream:
    """Where a detector is in its test video (module docstring). ``new_state()`` makes the
    backbone's empty state."""

    def __init__(self, new_state: Callable[[], ShiftState], gap: str = "reset") -> None:
        if gap not in STREAM_GAPS:
            raise ValueError(f"stream_gap must be one of {STREAM_GAPS}, got {gap!r}")
        self.new_state, self.gap = new_state, gap
        self.video: Any = None
        self.frame_id: Optional[int] = None
        self.state: Optional[ShiftState] = None

    def forget(self) -> None:
        """The next frame starts a new video."""
        self.video = self.frame_id = self.state = None

    @property
    def cache_bytes(self) -> int:
        """Bytes of the shift buffers carried to the next frame (0 outside a video)."""
        return 0 if self.state is None else self.state.nbytes

    def advance(self, meta: dict) -> ShiftState:
        """The state frame ``meta`` (a data sample's metainfo) steps from: the previous frame's,
        or empty at a new video (see the module docstring)."""
        missing = [k for k in STREAM_META_KEYS if k not in meta]
        if missing:
            raise ValueError(
                f"ClipRFCN stream test needs metainfo {missing} on every frame "
                f"(add them to PackDetInputs meta_keys); got keys {sorted(meta)}"
            )
        video, frame_id = meta["video"], int(meta["frame_id"])
        same = self.state is not None and self.video == video
        gap = same and frame_id > self.frame_id + 1
        if gap and self.gap == "raise":
            raise ValueError(
                f"ClipRFCN stream: video {video} jumps from frame {self.frame_id} "
                f"to {frame_id} (stream_gap='raise'); test every frame in order"
            )
        if not same or frame_id <= self.frame_id or gap:
            self.state = self.new_state()
        self.video, self.frame_id = video, frame_id
        return self.state


def own_extent(frame: Tensor, sample, pad_size_divisor: int) -> Tensor:
    """``frame (1, 3, H, W)`` cropped from its test batch's padding to its own padded extent,
    so its shape (and its shift buffers') does not depend on which frames shared its batch;
    the sample's ``batch_input_shape``/``pad_shape`` follow."""
    h, w = sample.metainfo.get("img_shape", frame.shape[-2:])[:2]
    d = int(pad_size_divisor or 1)
    ph, pw = min(-(-h // d) * d, frame.shape[-2]), min(-(-w // d) * d, frame.shape[-1])
    if (ph, pw) != tuple(frame.shape[-2:]):
        frame = frame[..., :ph, :pw]
        sample.set_metainfo(dict(batch_input_shape=(ph, pw), pad_shape=(ph, pw)))
    return frame
