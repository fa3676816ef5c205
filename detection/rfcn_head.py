"""R-FCN head (Dai et al. 2016): position-sensitive score maps, PS RoI pooling and the vote.

``RFCNBBoxHead`` turns the last backbone map ``(N, in_channels, h, w)`` (res5 at stride 16)
into, per RoI, class scores ``(R, C+1)`` and class-agnostic box deltas ``(R, 4)``:

    res5 --1x1 conv, ReLU--> (N, mid, h, w) --1x1--> (N, k*k*(C+1), h, w)  PS RoI + vote -> (R, C+1)
                                            --1x1--> (N, k*k*8, h, w)      PS RoI + vote -> (R, 8)

The 8 box channels per cell are the original R-FCN's class-agnostic layout ``[bg dx dy dw dh,
fg dx dy dw dh]``; the foreground half is the box prediction, the background half is never
trained (as in the original, where its targets carry zero weight; it is tied into the graph
with a zero factor so that DistributedDataParallel sees every parameter used).
Targets, losses, box decoding and NMS are mmdet's ``BBoxHead`` machinery.

``RFCNRoIHead`` is the mmdet ``StandardRoIHead`` with the RoI extractor replaced by the
head's own PS pooling (no ``bbox_roi_extractor``), so ``TwoStageDetector``, the assigners and
samplers (including ``OHEMSampler`` and our :class:`~detection.ohem.HardestRoISampler`) work
unchanged.
"""

from __future__ import annotations

from typing import Optional, Sequence, Tuple, Union

from mmdet.models.roi_heads import StandardRoIHead
from mmdet.models.roi_heads.bbox_heads import BBoxHead
from mmdet.registry import MODELS
from mmengine.config import ConfigDict
from torch import Tensor, nn

from .ps_roi import PSRoIVote

_DEFAULT_INIT = [dict(type="Normal", std=0.01, layer="Conv2d", bias=0.0)]


@MODELS.register_module()
class RFCNBBoxHead(BBoxHead):
    """Position-sensitive score maps + PS RoI pooling + average vote.

    Args:
        num_classes: foreground classes ``C`` (30 for ImageNet-VID); scores have ``C+1``
            columns, background last (mmdet convention).
        in_channels: channels of the backbone map the head reads (2048 for res5 of
            ResNet-50/101 at full width).
        mid_channels: channels after the 1x1 reducing conv (+ReLU); 1024 in Dai et al.'s
            R-FCN; ``None``: no reducing conv, the score-map convs read ``in_channels`` directly
            (the MSRA R-FCN, whose shared dilated conv is :class:`detection.msra.RFCNSplitNeck`).
        k: the ``k x k`` position-sensitive grid (7 in R-FCN).
        spatial_scale: feature pixels per input pixel (``1/16``: res5 at stride 16).
        pool_mode: ``'align'`` (``torchvision.ops.ps_roi_align``, bilinear) or ``'pool'``
            (``ps_roi_pool``, quantised bins, the original R-FCN op).
        sampling_ratio: bilinear samples per cell side for ``'align'``.
        feat_index: which map of the backbone tuple to read (default the last).
        bbox_coder, loss_cls, loss_bbox, reg_decoded_bbox, predict_box_type: as mmdet
            ``BBoxHead`` (defaults: ``DeltaXYWHBBoxCoder`` with stds 0.1/0.2, softmax
            cross-entropy, smooth L1). Box regression is always class-agnostic.
        init_cfg: default: every conv ``Normal(std=0.01)``, bias 0.
    """

    def __init__(
        self,
        num_classes: int = 30,
        in_channels: int = 2048,
        mid_channels: Optional[int] = 1024,
        k: int = 7,
        spatial_scale: float = 1 / 16,
        pool_mode: str = "align",
        sampling_ratio: int = 2,
        feat_index: int = -1,
        init_cfg=_DEFAULT_INIT,
        **bbox_head_kwargs,
    ) -> None:
        for key in (
            "with_avg_pool",
            "roi_feat_size",
            "reg_class_agnostic",
            "with_cls",
            "with_reg",
            "reg_predictor_cfg",
            "cls_predictor_cfg",
        ):
            if key in bbox_head_kwargs:
                raise TypeError(f"RFCNBBoxHead does not take {key!r} (fixed by the R-FCN design)")
        mid = in_channels if mid_channels is None else mid_channels
        super().__init__(
            with_avg_pool=True,
            roi_feat_size=k,
            in_channels=mid,
            num_classes=num_classes,
            reg_class_agnostic=True,
            init_cfg=init_cfg,
            **bbox_head_kwargs,
        )
        if self.custom_cls_channels:
            raise ValueError("RFCNBBoxHead supports softmax losses with C+1 outputs only")
        del self.fc_cls, self.fc_reg, self.avg_pool  # replaced by score maps and the vote
        self.k, self.feat_index = k, feat_index
        self.map_channels = in_channels
        self.reduce = nn.Identity() if mid_channels is None else nn.Conv2d(in_channels, mid, 1)
        self.relu = nn.Identity() if mid_channels is None else nn.ReLU(inplace=True)
        self.cls_conv = nn.Conv2d(mid, k * k * (num_classes + 1), 1)
        self.reg_conv = nn.Conv2d(mid, k * k * 8, 1)
        self.vote = PSRoIVote(k, spatial_scale, pool_mode, sampling_ratio)

    def score_maps(self, x: Union[Tensor, Sequence[Tensor]]) -> Tuple[Tensor, Tensor]:
        """``(cls maps (N, k*k*(C+1), h, w), box maps (N, k*k*8, h, w))`` of a backbone map."""
        if not isinstance(x, Tensor):
            x = x[self.feat_index]
        if x.dim() != 4 or x.shape[1] != self.map_channels:
            raise ValueError(
                f"RFCNBBoxHead expects a map (N, {self.map_channels}, h, w), got {tuple(x.shape)}"
            )
        h = self.relu(self.reduce(x))
        return self.cls_conv(h), self.reg_conv(h)

    def forward(self, x: Union[Tensor, Sequence[Tensor]], rois: Tensor) -> Tuple[Tensor, Tensor]:
        """Backbone map(s) and rois ``(R, 5)`` -> ``(cls_score (R, C+1), bbox_pred (R, 4))``."""
        cls_maps, reg_maps = self.score_maps(x)
        cls_score = self.vote(cls_maps, rois)
        reg = self.vote(reg_maps, rois)
        bbox_pred = reg[:, 4:] + 0.0 * reg[:, :4]  # bg half: untrained, kept in the graph
        return cls_score, bbox_pred


@MODELS.register_module()
class RFCNRoIHead(StandardRoIHead):
    """mmdet ``StandardRoIHead`` whose box branch is an :class:`RFCNBBoxHead` (no RoI extractor).

    Args:
        bbox_head: config of an :class:`RFCNBBoxHead`.
        train_cfg: mmdet rcnn train cfg: ``assigner`` (e.g. ``MaxIoUAssigner`` 0.5/0.5),
            ``sampler`` (R-FCN OHEM: ``HardestRoISampler(num=128)``; or mmdet's
            ``OHEMSampler`` / ``RandomSampler``), ``pos_weight``.
        test_cfg: mmdet rcnn test cfg (``score_thr``, ``nms``, ``max_per_img``).
        bbox_roi_extractor: must be ``None`` (PS pooling lives in the head).
    """

    def __init__(
        self,
        bbox_head: dict,
        train_cfg: Optional[dict] = None,
        test_cfg: Optional[dict] = None,
        bbox_roi_extractor: Optional[dict] = None,
        init_cfg: Optional[dict] = None,
        **kwargs,
    ) -> None:
        if bbox_roi_extractor is not None:
            raise ValueError(
                "RFCNRoIHead pools inside its bbox_head; bbox_roi_extractor must be None"
            )
        for key in ("mask_head", "mask_roi_extractor", "shared_head"):
            if kwargs.get(key) is not None:
                raise ValueError(f"RFCNRoIHead does not support {key}")
        train_cfg = ConfigDict(train_cfg) if isinstance(train_cfg, dict) else train_cfg
        test_cfg = ConfigDict(test_cfg) if isinstance(test_cfg, dict) else test_cfg
        super().__init__(
            bbox_head=bbox_head, train_cfg=train_cfg, test_cfg=test_cfg, init_cfg=init_cfg
        )

    def init_bbox_head(self, bbox_roi_extractor, bbox_head: dict) -> None:
        self.bbox_roi_extractor = None
        self.bbox_head = MODELS.build(bbox_head)
        if not isinstance(self.bbox_head, RFCNBBoxHead):
            raise TypeError(
                f"RFCNRoIHead needs an RFCNBBoxHead, got {type(self.bbox_head).__name__}"
            )

    def _bbox_forward(self, x: Tuple[Tensor], rois: Tensor) -> dict:
        """Maps ``x``, rois ``(R, 5)`` -> ``dict(cls_score, bbox_pred, bbox_feats=None)``."""
        cls_score, bbox_pred = self.bbox_head(x, rois)
        return dict(cls_score=cls_score, bbox_pred=bbox_pred, bbox_feats=None)
