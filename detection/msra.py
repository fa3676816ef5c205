"""The MSRA R-FCN pieces (FGFA/DFF ``resnet_v1_101_rfcn``, the head of the TSM paper's table 9).

The MSRA code does not put the RPN on res4 with its own 3x3 conv as Dai et al.'s paper does:
one dilated 3x3 conv maps res5 to 1024 channels and its two halves feed the two heads::

    res5 (N, 2048, h, w) --3x3 conv, pad 6, dilation 6, ReLU--> (N, 1024, h, w)
         channels [0:512]    -> RPN: two 1x1 convs (2A scores, 4A deltas)    (PlainRPNHead)
         channels [512:1024] -> R-FCN: two 1x1 convs to the position-sensitive maps
                                (RFCNBBoxHead with mid_channels=None)

* :class:`RFCNSplitNeck` (mmdet neck): the shared conv and the split, returning
  ``(rpn_map (N, rpn_channels, h, w), rfcn_map (N, out - rpn_channels, h, w))``;
* :class:`PlainRPNHead`: mmdet's ``RPNHead`` without its 3x3 conv (the 1x1 convs read the
  neck's half directly);
* :class:`ClipHorizontalFlip` (a ``DetDataPreprocessor`` batch augment): MSRA's training flip,
  drawn once per clip so that all ``T`` frames of a clip are flipped together.
"""

from __future__ import annotations

from typing import Sequence, Tuple

import torch
from mmdet.models.dense_heads import RPNHead
from mmdet.registry import MODELS
from torch import Tensor, nn


@MODELS.register_module()
class RFCNSplitNeck(nn.Module):
    """``feat_conv_3x3`` of the MSRA R-FCN and the RPN / R-FCN channel split.

    Args:
        in_channels: channels of the backbone map read (res5: 2048).
        out_channels: channels of the shared conv (1024).
        rpn_channels: the first ``rpn_channels`` go to the RPN (512), the rest to R-FCN.
        dilation: dilation and padding of the 3x3 conv (6).
        feat_index: which map of the backbone tuple to read (default the last).
    """

    def __init__(
        self,
        in_channels: int = 2048,
        out_channels: int = 1024,
        rpn_channels: int = 512,
        dilation: int = 6,
        feat_index: int = -1,
    ) -> None:
        super().__init__()
        if not 0 < rpn_channels < out_channels:
            raise ValueError(
                f"rpn_channels must be in (0, out_channels={out_channels}), got {rpn_channels}"
            )
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=dilation, dilation=dilation)
        self.rpn_channels, self.feat_index = rpn_channels, feat_index
        nn.init.normal_(self.conv.weight, std=0.01)
        nn.init.zeros_(self.conv.bias)

    def forward(self, feats: Sequence[Tensor]) -> Tuple[Tensor, Tensor]:
        """Backbone maps -> ``(rpn map, rfcn map)``, both ``(N, C_half, h, w)``."""
        x = feats if isinstance(feats, Tensor) else feats[self.feat_index]
        if x.dim() != 4 or x.shape[1] != self.conv.in_channels:
            raise ValueError(
                f"RFCNSplitNeck expects (N, {self.conv.in_channels}, h, w), got {tuple(x.shape)}"
            )
        y = torch.relu(self.conv(x))
        return y[:, : self.rpn_channels], y[:, self.rpn_channels :]


@MODELS.register_module()
class PlainRPNHead(RPNHead):
    """mmdet ``RPNHead`` whose score and delta 1x1 convs read ``in_channels`` directly (no 3x3
    conv): the MSRA R-FCN's RPN on its half of the shared conv. Args as ``RPNHead``
    (``feat_channels`` is ignored)."""

    def _init_layers(self) -> None:
        self.rpn_conv = nn.Identity()  # forward_single's ReLU is then a no-op on ReLU output
        self.rpn_cls = nn.Conv2d(self.in_channels, self.num_base_priors * self.cls_out_channels, 1)
        self.rpn_reg = nn.Conv2d(
            self.in_channels, self.num_base_priors * self.bbox_coder.encode_size, 1
        )


def _flip_boxes(boxes, width: float):
    """Boxes ``(K, 4)`` ``x1 y1 x2 y2`` (Tensor or mmdet ``HorizontalBoxes``) mirrored in an
    image of ``width`` pixels: ``x1' = width - x2``, ``x2' = width - x1``."""
    t = boxes.tensor if hasattr(boxes, "tensor") else boxes
    flipped = t.clone()
    flipped[:, 0], flipped[:, 2] = width - t[:, 2], width - t[:, 0]
    return type(boxes)(flipped) if hasattr(boxes, "tensor") else flipped


@MODELS.register_module()
class ClipHorizontalFlip(nn.Module):
    """Flip whole clips left-right with probability ``prob`` (training batch augment).

    ``inputs (N*T, 3, H, W)``, the ``T = clip_len`` frames of a clip contiguous; each frame is
    mirrored within its own ``img_shape`` (batch padding stays at the right/bottom) and its
    ``gt_instances.bboxes`` with it; ``flip``/``flip_direction`` are set in the metainfo.
    """

    def __init__(self, clip_len: int, prob: float = 0.5) -> None:
        super().__init__()
        if clip_len < 1 or not 0.0 <= prob <= 1.0:
            raise ValueError(
                f"ClipHorizontalFlip needs clip_len >= 1 and 0 <= prob <= 1, got "
                f"clip_len={clip_len}, prob={prob}"
            )
        self.clip_len, self.prob = clip_len, prob

    def forward(self, inputs: Tensor, data_samples: list) -> tuple:
        n = inputs.shape[0]
        if n % self.clip_len or n != len(data_samples):
            raise ValueError(
                f"ClipHorizontalFlip: batch {tuple(inputs.shape)} with "
                f"{len(data_samples)} samples is not whole clips of "
                f"clip_len={self.clip_len}"
            )
        flips = torch.rand(n // self.clip_len) < self.prob
        inputs = inputs.clone()
        for i, sample in enumerate(data_samples):
            flip = bool(flips[i // self.clip_len])
            sample.set_metainfo(dict(flip=flip, flip_direction="horizontal" if flip else None))
            if not flip:
                continue
            h, w = sample.metainfo.get("img_shape", inputs.shape[-2:])[:2]
            inputs[i, :, :h, :w] = inputs[i, :, :h, :w].flip(-1)
            if "gt_instances" in sample and len(sample.gt_instances):
                sample.gt_instances.bboxes = _flip_boxes(sample.gt_instances.bboxes, float(w))
        return inputs, data_samples
