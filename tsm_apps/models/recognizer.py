"""Clip recognizers: a (shifted) 2D trunk, global average pooling, dropout, fc, average consensus.

``shift=None`` gives TSN; ``'offline'`` TSM; ``'online'`` the causal TSM used for streaming.
Input ``(N, T, C, H, W)`` -> logits ``(N, num_classes)``; ``C = config.in_channels`` (3 for RGB,
``2 * new_length`` for stacked flow, see :mod:`tsm_apps.models.modality`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Optional

from torch import Tensor, nn

from ..options import from_mapping
from .backbone import BackboneConfig, build_trunk, set_num_segments, stage_strides
from .modality import set_input_channels
from .shift import DEFAULT_FOLD_DIV


@dataclass
class RecognizerConfig(BackboneConfig):
    """Backbone fields plus the classifier; ``asdict`` of this is what checkpoints store."""

    num_classes: int = 400
    dropout: float = 0.5
    in_channels: int = 3  # 3: RGB; 2 * new_length: stacked flow (tsm_apps.models.modality)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.num_classes < 1:
            raise ValueError(f"num_classes must be >= 1, got {self.num_classes}")
        if self.in_channels < 1:
            raise ValueError(f"in_channels must be >= 1, got {self.in_channels}")

    @classmethod
    def from_dict(cls, d: dict) -> "RecognizerConfig":
        return from_mapping(cls, d, "recognizer config")

    def to_dict(self) -> dict:
        d = asdict(self)
        d["strides"], d["dilations"] = list(self.strides), list(self.dilations)
        return d


class Recognizer(nn.Module):
    """TSM/TSN recognizer. ``backbone`` maps ``(N*T, 3, H, W)`` to ``(N*T', C, h, w)``.

    ``T' = T // 2`` with temporal pooling, else ``T``. ``features`` and ``fc`` are public so that
    CAMs can be computed from the last conv features (``dissect``).
    """

    def __init__(self, backbone: nn.Module, feat_dim: int, config: RecognizerConfig) -> None:
        super().__init__()
        self.config = config
        self.backbone = backbone
        self.dropout = nn.Dropout(config.dropout)
        self.fc = nn.Linear(feat_dim, config.num_classes)
        nn.init.normal_(self.fc.weight, 0, 0.001)
        nn.init.zeros_(self.fc.bias)

    @property
    def num_segments(self) -> int:
        return self.config.num_segments

    @num_segments.setter
    def num_segments(self, t: int) -> None:
        set_num_segments(self.backbone, t, self.config.temporal_pool)
        self.config.num_segments = t

    def _check(self, x: Tensor) -> None:
        c = self.config.in_channels
        if x.dim() != 5 or x.shape[2] != c:
            raise ValueError(f"Recognizer expects (N, T, {c}, H, W), got {tuple(x.shape)}")
        if x.shape[1] != self.num_segments:
            raise ValueError(
                f"Recognizer built for T={self.num_segments} frames, got input "
                f"{tuple(x.shape)}; set model.num_segments to change T"
            )

    def features(self, x: Tensor) -> Tensor:
        """Last conv features ``(N, T', C, h, w)`` for clips ``(N, T, 3, H, W)``."""
        self._check(x)
        n = x.shape[0]
        f = self.backbone(x.flatten(0, 1))
        return f.reshape(n, -1, *f.shape[1:])

    def head(self, feats: Tensor) -> Tensor:
        """Pool, dropout, fc and average consensus: ``(N, T', C, h, w)`` -> ``(N, K)``."""
        frame_logits = self.fc(self.dropout(feats.mean(dim=(3, 4))))
        return frame_logits.mean(dim=1)

    def forward(self, x: Tensor) -> Tensor:
        return self.head(self.features(x))


def build_recognizer(
    arch: str = "resnet50",
    num_classes: int = 400,
    num_segments: int = 8,
    shift: Optional[str] = "offline",
    fold_div: int = DEFAULT_FOLD_DIV,
    place: str = "blockres",
    temporal_pool: bool = False,
    non_local: bool = False,
    dropout: float = 0.5,
    width: float = 1.0,
    output_stride: int = 32,
    in_channels: int = 3,
) -> Recognizer:
    """Build a TSM (``shift='offline'|'online'``) or TSN (``shift=None``) recognizer.

    ``output_stride`` 16 or 8 (ResNets only) keeps the last stages at a finer resolution with
    dilated 3x3 convolutions (see :func:`tsm_apps.models.backbone.stage_strides`)."""
    strides, dilations = stage_strides(output_stride)
    if output_stride != 32 and arch == "mobilenetv2":
        raise ValueError("output_stride other than 32 is defined for ResNets only")
    cfg = RecognizerConfig(
        arch=arch,
        num_segments=num_segments,
        shift=shift,
        fold_div=fold_div,
        place=place,
        temporal_pool=temporal_pool,
        non_local=non_local,
        width=width,
        num_classes=num_classes,
        dropout=dropout,
        strides=strides,
        dilations=dilations,
        in_channels=in_channels,
    )
    return recognizer_from_config(cfg)


def recognizer_from_config(cfg: RecognizerConfig) -> Recognizer:
    trunk = set_input_channels(build_trunk(cfg), cfg.in_channels)
    return Recognizer(trunk, trunk.out_channels, cfg)
