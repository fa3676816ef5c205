"""The sections of a training configuration: the model, the data and the test protocol a
checkpoint records (the optimisation's: :mod:`~tsm_apps.train.optimisation`), and
:func:`check`, which validates every section. Each is a typed dataclass whose fields are
``tsm train`` flags (:mod:`tsm_apps.options`: the help of every flag is the field's ``option``
text).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from ..data.protocol import official_scale_size
from ..data.sampling import TRAIN_SAMPLINGS
from ..data.transforms import MULTI_SCALES
from ..models.modality import MODALITIES
from ..options import numbers, option

SHIFTS = ("offline", "online", "none")
CROPS = ("area", "multiscale")
NORMALIZE_ON = ("auto", "worker", "device")


def check(checks: list, where: str) -> None:
    """Raise ``ValueError("<where>: <message>")`` for the first failed ``(ok, message)``."""
    for ok, msg in checks:
        if not ok:
            raise ValueError(f"{where}: {msg}")


def is_number(v: Any) -> bool:
    """``v`` is an int or a float (not a bool)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)


@dataclass
class ModelConfig:
    """The recognizer: backbone, temporal shift, classifier, input modality."""

    arch: str = field(default="resnet50", **option("backbone (resnet18/34/50/101, mobilenetv2)"))
    width: float = field(default=1.0, **option("channel width multiplier of the backbone"))
    output_stride: int = field(
        default=32,
        **option("16 or 8: dilated last stages (ResNets), finer CAMs", choices=(32, 16, 8)),
    )
    segments: int = field(default=8, **option("frames per clip, T (segments)"))
    shift: str = field(
        default="offline",
        **option(
            "temporal shift: offline (bi-directional TSM), online (uni-directional), none (TSN)",
            choices=SHIFTS,
        ),
    )
    fold_div: int = field(default=8, **option("1/fold_div of the channels shift each way"))
    dropout: float = field(default=0.5, **option("dropout before the classifier"))
    zero_init_residual: bool = field(
        default=False,
        **option(
            "start each residual block as the identity (the gamma of its last BN at 0, "
            "SlowFast's ZERO_INIT_FINAL_BN): for training from scratch"
        ),
    )
    num_classes: int = field(default=0, **option("classes (0: from the data's labels)"))
    pretrained: str = field(
        default="",
        **option("checkpoint to fine-tune from (its fc re-initialised when the classes differ)"),
    )
    modality: str = field(
        default="rgb",
        **option(
            "rgb, or flow: new_length stacked x/y flow frames per segment", choices=MODALITIES
        ),
    )
    new_length: int = field(default=5, **option("flow frames per segment (2 x this channels)"))

    def __post_init__(self) -> None:
        check(
            [
                (self.segments >= 1, f"segments must be >= 1, got {self.segments}"),
                (
                    self.output_stride in (32, 16, 8),
                    f"output_stride must be 32, 16 or 8, got {self.output_stride}",
                ),
                (self.shift in SHIFTS, f"shift must be one of {SHIFTS}, got {self.shift!r}"),
                (
                    self.modality in MODALITIES,
                    f"modality must be one of {MODALITIES}, got {self.modality!r}",
                ),
                (self.new_length >= 1, f"new_length must be >= 1, got {self.new_length}"),
            ],
            "model",
        )

    @property
    def shift_mode(self) -> Optional[str]:
        """The ``shift`` argument of :func:`tsm_apps.build_recognizer` (``None`` for TSN)."""
        return None if self.shift == "none" else self.shift

    @property
    def in_channels(self) -> int:
        """Input channels per segment: 3 (RGB) or ``2 * new_length`` (stacked flow x/y)."""
        return 3 if self.modality == "rgb" else 2 * self.new_length


@dataclass
class DataConfig:
    """Where the clips come from and how they are sampled, augmented and decoded."""

    path: str = field(
        default="",
        **option(
            "a folder holding train.txt/val.txt (and classes.txt), or the train list itself",
            flag="data",
        ),
    )
    train_list: str = field(default="", **option("the train list (default: <data>/train.txt)"))
    val_list: str = field(default="", **option("the val list (default: <data>/val.txt)"))
    size: int = field(default=224, **option("crop size in pixels"))
    min_area: float = field(
        default=0.5, **option("the 'area' crop covers [min_area, 1] of the frame")
    )
    crop: str = field(
        default="area",
        **option(
            "training crop: area (random area and ratio), multiscale (TSN's GroupMultiScaleCrop "
            "over crop_scales)",
            choices=CROPS,
        ),
    )
    crop_scales: list = field(
        default_factory=lambda: list(MULTI_SCALES),
        **option("the multiscale crop's scales, comma-separated", type=numbers, metavar="V,V,..."),
    )
    flip: bool = field(
        default=False,
        **option("random horizontal flip (off by default: it swaps left and right motion)"),
    )
    scale_size: int = field(
        default=0,
        **option(
            "shorter side before validation's centre crop (0: size * 256 // 224, the official "
            "ratio; -1: size itself, so a square frame is seen whole)"
        ),
    )
    sampling: str = field(
        default="tsn",
        **option(
            "frame sampling in training and test: tsn (one frame per segment), dense (I3D: a "
            "64-frame window)",
            choices=TRAIN_SAMPLINGS,
        ),
    )
    cache: bool = field(
        default=True, **option("decode every video once and keep the uint8 frames in memory")
    )
    workers: int = field(default=0, **option("data-loading processes (0: in the main process)"))
    normalize: str = field(
        default="auto",
        **option(
            "where training clips are normalised: worker (float clips leave the loader), device "
            "(uint8 clips are copied, then normalised on the device: 4x fewer bytes, less CPU a "
            "clip, the same values); auto: device on CUDA, else worker",
            choices=NORMALIZE_ON,
        ),
    )

    def __post_init__(self) -> None:
        check(
            [
                (self.size >= 16, f"size must be >= 16 pixels, got {self.size}"),
                (0 < self.min_area <= 1, f"min_area must be in (0, 1], got {self.min_area}"),
                (self.crop in CROPS, f"crop must be one of {CROPS}, got {self.crop!r}"),
                (
                    self.sampling in TRAIN_SAMPLINGS,
                    f"sampling must be one of {TRAIN_SAMPLINGS}, got {self.sampling!r}",
                ),
                (
                    self.normalize in NORMALIZE_ON,
                    f"normalize must be one of {NORMALIZE_ON}, got {self.normalize!r}",
                ),
                (
                    self.scale_size in (0, -1) or self.scale_size >= self.size,
                    f"scale_size must be 0, -1 or >= size {self.size}, got {self.scale_size}",
                ),
                (
                    bool(self.crop_scales)
                    and all(is_number(v) and 0 < v <= 1 for v in self.crop_scales),
                    f"crop_scales must be fractions in (0, 1], got {self.crop_scales!r}",
                ),
            ],
            "data",
        )

    @property
    def val_scale_size(self) -> int:
        """Shorter side before validation's centre crop."""
        if self.scale_size == -1:
            return self.size
        return self.scale_size or official_scale_size(self.size)

    def normalize_on(self, device: Any) -> str:
        """``"worker"`` or ``"device"``: where ``normalize`` puts it for a run on ``device``."""
        if self.normalize != "auto":
            return self.normalize
        return "device" if str(device).startswith("cuda") else "worker"

    def lists(self) -> tuple[Path, Path]:
        """``(train list, val list)``; ``path`` may be a folder or the train list itself."""
        data = Path(self.path)
        if not self.path:
            raise ValueError("no data given: pass --data DIR (holding train.txt/val.txt) or a list")
        train = (
            Path(self.train_list)
            if self.train_list
            else (data / "train.txt" if data.is_dir() else data)
        )
        val = (
            Path(self.val_list)
            if self.val_list
            else (data / "val.txt" if data.is_dir() else data.with_name("val.txt"))
        )
        for p in (train, val):
            if not p.is_file():
                raise FileNotFoundError(f"list file not found: {p} (from --data {self.path})")
        return train, val


@dataclass
class TestViews:
    """The test a checkpoint records beside validation's geometry: its
    :class:`~tsm_apps.data.protocol.TestProtocol` is ``TrainConfig.test_protocol()``."""

    __test__ = False  # not a pytest test class
    clips: int = field(default=1, **option("clips per video", flag="test-clips"))
    crops: int = field(
        default=1,
        **option(
            "views per clip: 1 centre, 3 along the longer side, 10",
            flag="test-crops",
            choices=(1, 3, 10),
        ),
    )
    full_res: bool = field(
        default=False,
        **option(
            "crops of scale_size instead of size (the official --full_res)", flag="test-full-res"
        ),
    )

    def __post_init__(self) -> None:
        check(
            [
                (self.clips >= 1, f"clips must be >= 1, got {self.clips}"),
                (self.crops in (1, 3, 10), f"crops must be 1, 3 or 10, got {self.crops}"),
            ],
            "test",
        )
