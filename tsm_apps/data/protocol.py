"""Test protocols: how a checkpoint's clips are sampled, resized, cropped and fused at test time.

A :class:`TestProtocol` belongs to the checkpoint
(:func:`tsm_apps.checkpoint.identity.protocol_for`), so ``tsm test``,
dissection, the app and the Python API see the same pixels and give the same answer:

* ours (``tsm_apps`` layout): the protocol recorded by training (``meta['test_protocol']``: the
  validation protocol it chose ``best.pth`` with); older checkpoints: what their training
  validated on (shorter side to the crop size, centre crop, torch resize).
* the official TSM repository (``test_models.py`` + ``ops/dataset.py``): segment centres
  ``int(tick / 2 + tick * i)``; ``GroupScale(`` :func:`official_scale_size` ``)`` (PIL bilinear via
  torchvision); torchvision ``CenterCrop`` rounding; logits averaged over views. ``_dense``
  file names: I3D dense sampling, 10 clips, full resolution (crops of 256), 3 crops
  (``GroupFullResSample``), as the authors' test logs.
* mmaction2: the test pipeline of the config stored in the checkpoint (``meta['cfg']``, read as
  data): ``SampleFrames``/``DenseSampleFrames``, ``Resize(scale=(-1, s))`` (cv2 bilinear, mmcv
  rounding), ``CenterCrop``/``ThreeCrop``/``TenCrop`` (floored offsets), ``average_clips``.
  Without a stored config: mmaction2's TSM validation pipeline (8 segments, short side 256,
  centre crop 224, mean of softmax).

``view="frame"`` (an explicit option, e.g. to see a CAM over the whole frame) keeps the protocol's
sampling and scale but takes the whole resized frame instead of crops.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Mapping, Optional

from ..options import from_mapping
from .crops import CROP_STYLES, VIEW_CROPS
from .resize import RESIZE_BACKENDS, SIZE_ROUNDING
from .sampling import DENSE_TEST_CLIPS, DENSE_WINDOW

SAMPLINGS = ("tsn", "dense", "twice", "multi")
FUSIONS = ("logits", "prob")
VIEWS = ("crop", "frame")
OFFICIAL_SCALE = (256, 224)  # shorter side : crop side (official test_models.py scale_size)

__all__ = [
    "TestProtocol",
    "mmaction2_protocol",
    "official_scale_size",
    "SAMPLINGS",
    "FUSIONS",
    "VIEWS",
    "OFFICIAL_SCALE",
]


def official_scale_size(crop_size: int) -> int:
    """The shorter side a ``crop_size`` view is cut from: ``crop_size * 256 // 224`` (official
    ``TSN.scale_size``, used by ``test_models.py``; our validation's default)."""
    scale, crop = OFFICIAL_SCALE
    return int(crop_size) * scale // crop


@dataclass(frozen=True)
class TestProtocol:
    """One checkpoint's test protocol (see the module docstring for the origins).

    ``sampling``: ``tsn`` (segment centres; ``clips > 1`` is ``multi``), ``dense`` (``clips``
    starts of a ``dense_window``-frame window), ``twice`` (centres and segment starts, 2 clips)
    or ``multi`` (``clips`` clips spread inside the segments). ``scale_size``: shorter side
    before cropping; ``crop_size``/``crops``/``style``: the views
    (:mod:`tsm_apps.data.crops`); ``resize``/``size_rounding``: :mod:`tsm_apps.data.resize`;
    ``fusion``: how views are averaged (``logits``: mean logits, official; ``prob``: mean of
    softmax, mmaction2's ``average_clips='prob'``); ``source``: where the protocol comes from.
    """

    __test__ = False  # not a pytest test class

    origin: str = "tsm_apps"
    sampling: str = "tsn"
    clips: int = 1
    scale_size: int = 256
    crop_size: int = 224
    crops: int = 1
    style: str = "official"
    resize: str = "pil"
    size_rounding: str = "floor"
    fusion: str = "logits"
    dense_window: int = DENSE_WINDOW
    view: str = "crop"
    source: str = "default"

    def __post_init__(self) -> None:
        checks = [
            (self.sampling in SAMPLINGS, f"sampling must be one of {SAMPLINGS}"),
            (self.clips >= 1, "clips must be >= 1"),
            (self.crop_size >= 1 and self.scale_size >= 1, "sizes must be >= 1"),
            (self.style in CROP_STYLES, f"style must be one of {CROP_STYLES}"),
            (
                self.crops in VIEW_CROPS.get(self.style, ()),
                f"{self.style} crops must be one of {VIEW_CROPS.get(self.style)}",
            ),
            (self.resize in RESIZE_BACKENDS, f"resize must be one of {RESIZE_BACKENDS}"),
            (self.size_rounding in SIZE_ROUNDING, f"size_rounding must be one of {SIZE_ROUNDING}"),
            (self.fusion in FUSIONS, f"fusion must be one of {FUSIONS}"),
            (self.view in VIEWS, f"view must be one of {VIEWS}"),
            (self.sampling != "twice" or self.clips == 2, "twice sampling gives 2 clips"),
        ]
        for ok, msg in checks:
            if not ok:
                raise ValueError(f"test protocol: {msg} ({self.describe_fields()})")

    def describe_fields(self) -> str:
        return ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self))

    @property
    def views_per_clip(self) -> int:
        """Spatial views per clip (1 with ``view='frame'``)."""
        return 1 if self.view == "frame" else self.crops

    def describe(self) -> str:
        """One line for users, e.g. ``official: 10 dense clips x 3 crops of 256 from shorter
        side 256 (PIL), mean logits``."""
        what = {
            "tsn": "clip" if self.clips == 1 else "clips",
            "dense": "dense clips",
            "twice": "clips (twice)",
            "multi": "clips",
        }[self.sampling]
        space = (
            f"the whole frame at shorter side {self.scale_size}"
            if self.view == "frame"
            else f"{self.crops} crop{'s' if self.crops > 1 else ''} of {self.crop_size} "
            f"from shorter side {self.scale_size}"
        )
        fuse = "mean logits" if self.fusion == "logits" else "mean probabilities"
        return (
            f"{self.origin} protocol ({self.source}): {self.clips} {what} x {space} "
            f"({self.resize} resize), {fuse}"
        )

    def with_options(self, **changes: Any) -> "TestProtocol":
        """A copy with ``changes`` (None values ignored); ``clips > 1`` with TSN sampling
        becomes ``multi``."""
        changes = {k: v for k, v in changes.items() if v is not None}
        out = replace(self, **changes)
        if out.sampling == "tsn" and out.clips > 1:
            out = replace(out, sampling="multi")
        return out

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping) -> "TestProtocol":
        return from_mapping(cls, d, "test protocol")


def _mm_pipeline(cfg: Mapping) -> Optional[list]:
    for path in (
        ("test_pipeline",),
        ("test_dataloader", "dataset", "pipeline"),
        ("data", "test", "pipeline"),
        ("val_pipeline",),
    ):
        node: Any = cfg
        for key in path:
            node = node.get(key) if isinstance(node, Mapping) else None
        if isinstance(node, list) and node:
            return node
    return None


def _mm_steps(pipeline: list) -> dict:
    return {step.get("type"): step for step in pipeline if isinstance(step, Mapping)}


def mmaction2_protocol(cfg_text: Optional[str]) -> TestProtocol:
    """mmaction2's test protocol from the config text a checkpoint carries (module docstring)."""
    default = TestProtocol(
        "mmaction2",
        scale_size=256,
        crop_size=224,
        crops=1,
        style="mmaction2",
        resize="cv2",
        size_rounding="round",
        fusion="prob",
        source="mmaction2 TSM val pipeline (no config in the checkpoint)",
    )
    if not cfg_text:
        return default
    from ..config_text import read_config_text

    cfg = read_config_text(cfg_text, "mmaction2 checkpoint meta['cfg']")
    pipeline = _mm_pipeline(cfg)
    if pipeline is None:
        return default
    steps = _mm_steps(pipeline)
    out = dict(
        origin="mmaction2",
        style="mmaction2",
        resize="cv2",
        size_rounding="round",
        source="the test pipeline of the checkpoint's mmaction2 config",
    )
    head = (cfg.get("model") or {}).get("cls_head") or {}
    out["fusion"] = "prob" if head.get("average_clips", "prob") == "prob" else "logits"
    if "DenseSampleFrames" in steps:
        s = steps["DenseSampleFrames"]
        out.update(
            sampling="dense",
            clips=int(s.get("num_sample_positions", DENSE_TEST_CLIPS)),
            dense_window=int(s.get("sample_range", DENSE_WINDOW)),
        )
    elif "SampleFrames" in steps and steps["SampleFrames"].get("twice_sample"):
        out.update(sampling="twice", clips=2)
    resize = steps.get("Resize", {}).get("scale")
    if isinstance(resize, (list, tuple)) and len(resize) == 2 and -1 in resize:
        out["scale_size"] = int(max(resize))
    for kind, crops in (("CenterCrop", 1), ("ThreeCrop", 3), ("TenCrop", 10)):
        if kind in steps:
            size = steps[kind].get("crop_size", 224)
            out.update(crops=crops, crop_size=int(size if isinstance(size, int) else size[0]))
    return TestProtocol(**out)
