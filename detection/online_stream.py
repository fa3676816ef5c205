"""``OnlineStream``: a detector's online test, one frame at a time in video order, with the
backbone's online shift buffers carried from frame to frame (and from batch to batch).

A mixin of :class:`~detection.detector.ClipRFCN` (``test_mode='stream'``). The host provides
``backbone`` (a :class:`~detection.backbone.TSMResNet`: ``start_stream``/``stop_stream``,
``reset``, ``get_buffers``/``set_buffers``), ``extract_feat``, ``heads_predict``,
``data_preprocessor`` and ``stream_gap`` (``'reset'`` or ``'raise'``), and sets
``self._stream = None`` in its ``__init__``.

Frames: each ``(1, 3, H, W)``, cut from a test batch ``(B, 3, H, W)``; each data sample's
metainfo holds ``video`` (any hashable id) and ``frame_id`` (int). The stream starts from empty
(zero) buffers when ``video`` changes, ``frame_id`` does not increase, or ``frame_id`` skips
frames (``stream_gap='reset'``; ``'raise'`` refuses with ``ValueError``).
"""

from __future__ import annotations

from typing import List, Sequence

from mmdet.structures import SampleList
from torch import Tensor

STREAM_GAPS = ("reset", "raise")
STREAM_META_KEYS = ("video", "frame_id")


class OnlineStream:
    """The ``'stream'`` test mode of a detector (see the module docstring for the host)."""

    def reset_stream(self) -> None:
        """Forget the stream state (the next test frame starts a new video)."""
        self._stream = None

    def stream_cache_bytes(self) -> int:
        """Bytes of the online shift buffers carried to the next frame (0 outside a stream)."""
        bufs = (self._stream or {}).get("buffers") or []
        return sum(b.numel() * b.element_size() for b in bufs if b is not None)

    def predict_stream(
        self, batch_inputs: Tensor, batch_data_samples: SampleList, rescale: bool = True
    ) -> SampleList:
        """Frame by frame through the online backbone, shift buffers kept across calls."""
        out = []
        self.backbone.start_stream()
        try:
            for i, sample in enumerate(batch_data_samples):
                frame = self._own_extent(batch_inputs[i : i + 1], sample)
                self._advance_stream(sample)
                x = self.extract_feat(frame)
                self._stream["buffers"] = self.backbone.get_buffers()
                out.extend(self.heads_predict(x, [sample], rescale))
        except BaseException:
            self._stream = None
            raise
        finally:
            self.backbone.stop_stream()
        return out

    def _advance_stream(self, sample) -> None:
        """Load this frame's stream buffers into the backbone (zeros at a new video)."""
        meta = sample.metainfo
        missing = [k for k in STREAM_META_KEYS if k not in meta]
        if missing:
            raise ValueError(
                f"ClipRFCN stream test needs metainfo {missing} on every frame "
                "(add them to PackDetInputs meta_keys); got keys "
                f"{sorted(meta)}"
            )
        video, frame_id = meta["video"], int(meta["frame_id"])
        st = self._stream
        gap = st is not None and st["video"] == video and frame_id > st["frame_id"] + 1
        if gap and self.stream_gap == "raise":
            raise ValueError(
                f"ClipRFCN stream: video {video} jumps from frame {st['frame_id']} "
                f"to {frame_id} (stream_gap='raise'); test every frame in order"
            )
        if st is None or st["video"] != video or frame_id <= st["frame_id"] or gap:
            self.backbone.reset()
        else:
            self.backbone.set_buffers(st["buffers"])
        self._stream = dict(video=video, frame_id=frame_id, buffers=None)

    def _own_extent(self, frame: Tensor, sample) -> Tensor:
        """Crop batch padding to this frame's own padded extent so its shape (and the shift
        buffers') does not depend on which other frames shared its batch."""
        h, w = sample.metainfo.get("img_shape", frame.shape[-2:])[:2]
        d = int(getattr(self.data_preprocessor, "pad_size_divisor", 1) or 1)
        ph, pw = min(-(-h // d) * d, frame.shape[-2]), min(-(-w // d) * d, frame.shape[-1])
        if (ph, pw) != tuple(frame.shape[-2:]):
            frame = frame[..., :ph, :pw]
            sample.set_metainfo(dict(batch_input_shape=(ph, pw), pad_shape=(ph, pw)))
        return frame

    def stream_features(self, frames: Sequence[Tensor]) -> List[tuple]:
        """Backbone maps of ``frames`` (each ``(1, 3, H, W)``), one stream from empty buffers;
        the streaming path of :meth:`predict_stream` without the heads."""
        feats = []
        self.backbone.start_stream()
        try:
            for f in frames:
                feats.append(self.extract_feat(f))
        finally:
            self.backbone.stop_stream()
        return feats
