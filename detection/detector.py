"""``ClipRFCN``: an mmdet two-stage detector (R-FCN) that trains on clips and tests online.

Config kwargs (``model=dict(type='ClipRFCN', ...)``; see ``configs/_base_/rfcn_r101.py``):

* ``backbone``: a :class:`~detection.backbone.TSMResNet` (``shift='online'`` for online TSM,
  ``None`` for the TSN baseline; ``num_segments`` = the training clip length ``T``).
* ``rpn_head``: mmdet ``RPNHead`` on one backbone map, ``rpn_feat_index`` (R-FCN: res4,
  1024 channels at full width, with the backbone's ``out_indices=(2, 3)``); anchor generator
  ``strides=[16]``, scales ``[8, 16, 32]`` x ratios ``[0.5, 1, 2]`` (128..512-pixel anchors).
* ``rpn_feat_index``: index into the backbone's output tuple of the map the RPN reads
  (default 0); the R-FCN head reads its own ``feat_index`` (default -1, res5).
* ``roi_head``: :class:`~detection.rfcn_head.RFCNRoIHead` with an
  :class:`~detection.rfcn_head.RFCNBBoxHead` (``num_classes``, ``in_channels``,
  ``mid_channels``, ``k``, ``pool_mode``).
* ``train_cfg`` / ``test_cfg``: mmdet's ``rpn``, ``rpn_proposal``, ``rcnn`` dicts; R-FCN OHEM is
  ``rcnn.sampler=dict(type='HardestRoISampler', num=128)``.
* ``data_preprocessor``: mmdet ``DetDataPreprocessor`` (``pad_size_divisor`` 16 or 32).
* ``test_mode``: ``'stream'`` (default) runs the backbone one frame at a time in video order,
  keeping the online shift buffers between frames and batches, reset at a new video;
  ``'clip'`` runs each test batch as one clip (the only option for ``shift='offline'``): the
  batch must be consecutive frames of one video (``ValueError`` otherwise), and ``T`` is the
  batch size (a batch of 1 frame sees no other frame: set ``test_dataloader.batch_size``).
* ``stream_gap``: what the stream does at a gap in frame ids (``frame_id`` more than one after
  the previous frame of the same video, e.g. a subsampled val list): ``'reset'`` (default) starts
  from empty buffers, ``'raise'`` refuses with ``ValueError``.

* ``loss_frames``: the frames of a training clip the losses cover: ``'key'`` (default, the
  paper's way: FGFA's training code labels one key image per GPU, its other frames are
  context) the one frame whose metainfo ``clip_key`` is true, ``'clip'`` every frame.

Training batches are ``N`` clips of ``T`` consecutive frames of one video, contiguous:
``(N*T, 3, H, W)`` (build them with :class:`~detection.clips.ClipBatchSampler`, which marks each
clip's key frame; ``ImageNetVIDDataset`` passes the mark on as ``clip_key``: add it to the
training ``PackDetInputs(meta_keys=...)``). Either way a frame whose metainfo ``annotated`` is
``False`` gets no loss.

Test batches: frames in video order; each data sample's metainfo must hold ``video`` (any
hashable id) and ``frame_id`` (int) — add them to ``PackDetInputs(meta_keys=...)``. The
stream resets when ``video`` changes, ``frame_id`` does not increase, or (``stream_gap``) skips
frames.
"""

from __future__ import annotations

import copy
from typing import List, Optional

import torch
from mmdet.models.detectors import TwoStageDetector
from mmdet.registry import MODELS
from mmdet.structures import SampleList
from mmengine.config import ConfigDict
from torch import Tensor

from tsm_apps.models.shift.state import ShiftState

from .online_stream import STREAM_GAPS, STREAM_META_KEYS, TestStream, own_extent

TEST_MODES = ("stream", "clip")
LOSS_FRAMES = ("key", "clip")


@MODELS.register_module()
class ClipRFCN(TwoStageDetector):
    """R-FCN on a TSM/TSN backbone, trained on clips, tested online frame by frame.

    Args: ``backbone``, ``rpn_head``, ``roi_head``, ``train_cfg``, ``test_cfg``, ``neck``,
    ``data_preprocessor``, ``init_cfg`` as mmdet ``TwoStageDetector``; ``test_mode``,
    ``stream_gap``, ``rpn_feat_index`` and ``loss_frames`` as the module docstring.
    """

    def __init__(
        self,
        backbone: dict,
        rpn_head: dict,
        roi_head: dict,
        train_cfg: Optional[dict] = None,
        test_cfg: Optional[dict] = None,
        neck: Optional[dict] = None,
        data_preprocessor: Optional[dict] = None,
        init_cfg: Optional[dict] = None,
        test_mode: str = "stream",
        rpn_feat_index: int = 0,
        stream_gap: str = "reset",
        loss_frames: str = "key",
    ) -> None:
        if loss_frames not in LOSS_FRAMES:
            raise ValueError(f"loss_frames must be one of {LOSS_FRAMES}, got {loss_frames!r}")
        if test_mode not in TEST_MODES:
            raise ValueError(f"test_mode must be one of {TEST_MODES}, got {test_mode!r}")
        if stream_gap not in STREAM_GAPS:
            raise ValueError(f"stream_gap must be one of {STREAM_GAPS}, got {stream_gap!r}")
        # plain dicts (built in Python, not from a config file) work too
        train_cfg = ConfigDict(train_cfg) if isinstance(train_cfg, dict) else train_cfg
        test_cfg = ConfigDict(test_cfg) if isinstance(test_cfg, dict) else test_cfg
        super().__init__(
            backbone=backbone,
            neck=neck,
            rpn_head=rpn_head,
            roi_head=roi_head,
            train_cfg=train_cfg,
            test_cfg=test_cfg,
            data_preprocessor=data_preprocessor,
            init_cfg=init_cfg,
        )
        shift = getattr(getattr(self.backbone, "cfg", None), "shift", None)
        if test_mode == "stream" and shift == "offline":
            raise ValueError(
                "test_mode='stream' needs a causal backbone (shift='online' or "
                "None); shift='offline' needs test_mode='clip'"
            )
        self.test_mode, self.stream_gap = test_mode, stream_gap
        self.rpn_feat_index, self.loss_frames = rpn_feat_index, loss_frames
        self.test_stream = TestStream(self.backbone.new_state, stream_gap)

    # -- training ----------------------------------------------------------------------------
    @property
    def clip_len(self) -> int:
        return int(getattr(self.backbone, "num_segments", 1))

    def check_clips(self, batch_inputs: Tensor, batch_data_samples: SampleList) -> None:
        """Training batch = whole clips of ``clip_len`` frames, each clip from one video."""
        n, t = batch_inputs.shape[0], self.clip_len
        if n != len(batch_data_samples) or n % t:
            raise ValueError(
                f"ClipRFCN: a training batch must be N clips of T={t} frames; got "
                f"inputs {tuple(batch_inputs.shape)} and {len(batch_data_samples)} "
                "data samples (use ClipBatchSampler with clip_len=T)"
            )
        for c in range(n // t):
            videos = {s.metainfo.get("video") for s in batch_data_samples[c * t : (c + 1) * t]}
            if len(videos) > 1:
                raise ValueError(
                    f"ClipRFCN: clip {c} of the batch mixes videos {sorted(map(str, videos))}"
                )

    def loss_indices(self, batch_data_samples: SampleList) -> List[int]:
        """Batch positions the losses cover (``loss_frames``): each clip's key frame, or every
        frame; frames with metainfo ``annotated=False`` left out."""
        t, keep = self.clip_len, []
        for c in range(len(batch_data_samples) // t):
            clip = range(c * t, (c + 1) * t)
            if self.loss_frames == "key":
                marks = [batch_data_samples[i].metainfo.get("clip_key") for i in clip]
                if None in marks:
                    raise ValueError(
                        f"ClipRFCN loss_frames='key': frame {c * t + marks.index(None)} of the "
                        "batch has no metainfo 'clip_key' (train with ClipBatchSampler on "
                        "ImageNetVIDDataset and add 'clip_key' to PackDetInputs meta_keys, or "
                        "set loss_frames='clip')"
                    )
                clip = [i for i, m in zip(clip, marks) if m]
                if len(clip) != 1:
                    raise ValueError(
                        f"ClipRFCN loss_frames='key': clip {c} of the batch has "
                        f"{len(clip)} frames with clip_key=True, expected 1"
                    )
            keep += [i for i in clip if batch_data_samples[i].metainfo.get("annotated", True)]
        return keep

    def loss(self, batch_inputs: Tensor, batch_data_samples: SampleList) -> dict:
        """Losses of ``N`` clips ``(N*T, 3, H, W)`` on the frames of :meth:`loss_indices`."""
        self.check_clips(batch_inputs, batch_data_samples)
        keep = self.loss_indices(batch_data_samples)
        x = self.extract_feat(batch_inputs)
        if not keep:
            # no labelled frame: zero loss that still touches every parameter
            return dict(loss_zero=sum(p.sum() * 0.0 for p in self.parameters() if p.requires_grad))
        if len(keep) < len(batch_data_samples):
            idx = torch.tensor(keep, device=batch_inputs.device)
            x = tuple(f.index_select(0, idx) for f in x)
            batch_data_samples = [batch_data_samples[i] for i in keep]
        return self.head_losses(x, batch_data_samples)

    def rpn_inputs(self, x: tuple) -> tuple:
        """The one-level tuple the RPN reads: ``(x[rpn_feat_index],)``."""
        if not -len(x) <= self.rpn_feat_index < len(x):
            raise ValueError(
                f"rpn_feat_index={self.rpn_feat_index} but the backbone returns {len(x)} maps"
            )
        return (x[self.rpn_feat_index],)

    def head_losses(self, x: tuple, batch_data_samples: SampleList) -> dict:
        """RPN + R-FCN losses on backbone maps ``x`` (one map per data sample)."""
        losses = dict()
        proposal_cfg = self.train_cfg.get("rpn_proposal", self.test_cfg.rpn)
        rpn_samples = copy.deepcopy(batch_data_samples)
        for s in rpn_samples:
            s.gt_instances.labels = torch.zeros_like(s.gt_instances.labels)
        rpn_losses, proposals = self.rpn_head.loss_and_predict(
            self.rpn_inputs(x), rpn_samples, proposal_cfg=proposal_cfg
        )
        for key in list(rpn_losses):
            if "loss" in key and "rpn" not in key:
                rpn_losses[f"rpn_{key}"] = rpn_losses.pop(key)
        losses.update(rpn_losses)
        losses.update(self.roi_head.loss(x, proposals, batch_data_samples))
        return losses

    def _forward(self, batch_inputs: Tensor, batch_data_samples: SampleList) -> tuple:
        """Tensor mode (no post-processing): ``((cls_score, bbox_pred),)`` of all RoIs."""
        x = self.extract_feat(batch_inputs)
        proposals = self.rpn_head.predict(self.rpn_inputs(x), batch_data_samples, rescale=False)
        return (self.roi_head.forward(x, proposals, batch_data_samples),)

    # -- testing -----------------------------------------------------------------------------
    def train(self, mode: bool = True) -> "ClipRFCN":
        self.reset_stream()  # weights may change: never carry buffers across train/eval
        return super().train(mode)

    def reset_stream(self) -> None:
        """Forget the test stream (the next test frame starts a new video)."""
        if hasattr(self, "test_stream"):
            self.test_stream.forget()

    def step_feat(self, frames: Tensor, state: ShiftState) -> tuple:
        """Backbone (and neck) maps of one frame per stream ``(S, 3, H, W)``; the streams'
        ``state`` is advanced in place (:meth:`~detection.backbone.TSMResNet.step`)."""
        x = self.backbone.step(frames, state)
        return self.neck(x) if self.with_neck else x

    def predict_stream(
        self, batch_inputs: Tensor, batch_data_samples: SampleList, rescale: bool = True
    ) -> SampleList:
        """Frame by frame through the online backbone, the state kept across calls
        (:class:`~detection.online_stream.TestStream`)."""
        out = []
        pad = getattr(self.data_preprocessor, "pad_size_divisor", 1)
        try:
            for i, sample in enumerate(batch_data_samples):
                frame = own_extent(batch_inputs[i : i + 1], sample, pad)
                state = self.test_stream.advance(sample.metainfo)
                out.extend(self.heads_predict(self.step_feat(frame, state), [sample], rescale))
        except BaseException:
            self.test_stream.forget()
            raise
        return out

    def predict(
        self, batch_inputs: Tensor, batch_data_samples: SampleList, rescale: bool = True
    ) -> SampleList:
        """Detections for frames ``(B, 3, H, W)`` given in video order."""
        if self.test_mode == "clip":
            return self.predict_clip(batch_inputs, batch_data_samples, rescale)
        return self.predict_stream(batch_inputs, batch_data_samples, rescale)

    def heads_predict(
        self, x: tuple, batch_data_samples: SampleList, rescale: bool = True
    ) -> SampleList:
        """RPN proposals + R-FCN detections on backbone maps ``x`` (one per sample)."""
        proposals = self.rpn_head.predict(self.rpn_inputs(x), batch_data_samples, rescale=False)
        results = self.roi_head.predict(x, proposals, batch_data_samples, rescale=rescale)
        return self.add_pred_to_datasample(batch_data_samples, results)

    def predict_clip(
        self, batch_inputs: Tensor, batch_data_samples: SampleList, rescale: bool = True
    ) -> SampleList:
        """The batch is one clip: the backbone sees all frames at once (``T`` = batch size)."""
        self.check_test_clip(batch_data_samples)
        t = self.clip_len
        self.backbone.set_num_segments(batch_inputs.shape[0])
        try:
            x = self.extract_feat(batch_inputs)
        finally:
            self.backbone.set_num_segments(t)
        return self.heads_predict(x, batch_data_samples, rescale)

    @staticmethod
    def check_test_clip(batch_data_samples: SampleList) -> None:
        """A clip-mode test batch must be consecutive frames (``frame_id`` +1 each) of one
        ``video``; ValueError naming what differs."""
        metas = [s.metainfo for s in batch_data_samples]
        missing = [k for k in STREAM_META_KEYS if any(k not in m for m in metas)]
        if missing:
            raise ValueError(
                f"ClipRFCN test_mode='clip' needs metainfo {missing} on every frame "
                "(add them to PackDetInputs meta_keys)"
            )
        videos = [m["video"] for m in metas]
        ids = [int(m["frame_id"]) for m in metas]
        if len(set(map(str, videos))) > 1:
            raise ValueError(
                f"ClipRFCN test_mode='clip': the batch mixes videos "
                f"{sorted(set(map(str, videos)))}; a test batch must be one clip"
            )
        if ids != list(range(ids[0], ids[0] + len(ids))):
            raise ValueError(
                f"ClipRFCN test_mode='clip': frame ids {ids} of video {videos[0]} "
                "are not consecutive; a test batch must be one clip"
            )
