"""What a checkpoint file is: its official file name parsed once, and the class names, the
number of segments and the test protocol that go with it.

* The official file name (mit-han-lab/temporal-shift-module)::

      TSM_<dataset>_<modality>_<arch>[_shift<div>_<place>][_tpool]_<consensus>_segment<T>_e<E>
          [...][_dense][_nl]

  e.g. ``TSM_kinetics_RGB_resnet50_shift8_blockres_avg_segment8_e50.pth``; read by
  :meth:`OfficialName.parse` and nowhere else.
* Test segments: the official scripts test every checkpoint of the README at its name's ``T``
  but the TSN baseline ``TSM_kinetics_RGB_resnet50_avg_segment5_e50.pth`` (trained on 5), which
  ``scripts/test_tsm_kinetics_rgb_8f.sh`` and the README's TSN rows (68.8% at 8 x 1 clip, 70.6%
  at 8 x 10 clips) test with ``--test_segments=8``.
* Class names (:func:`class_names`): a class file, the names our checkpoints store, a bundled
  list the file name implies (:func:`bundled_list_for`), else ``"class <i>"``.
* The test protocol (:func:`protocol_for`): ours as recorded by training, the official
  repository's (:func:`official_protocol`), mmaction2's stored config
  (:func:`tsm_apps.data.protocol.mmaction2_protocol`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional, Union

from ..data.classes import bundled_classes, read_class_file
from ..data.protocol import TestProtocol, mmaction2_protocol, official_scale_size
from ..data.sampling import DENSE_TEST_CLIPS

__all__ = [
    "OfficialName",
    "parse_official_name",
    "bundled_list_for",
    "class_names",
    "official_test_segments",
    "protocol_for",
    "official_protocol",
    "legacy_protocol",
]

PathLike = Union[str, os.PathLike]
_OFFICIAL_DATASETS = {
    "kinetics": "kinetics400",
    "something": "something_v1",
    "somethingv1": "something_v1",
    "somethingv2": "something_v2",
}
_MMACTION2_DATASETS = (
    ("kinetics400", "kinetics400"),
    ("k400", "kinetics400"),
    ("sthv2", "something_v2"),
    ("sthv1", "something_v1_mmaction2"),
)
# official checkpoints tested at another T than their name's: scripts/test_tsm_kinetics_rgb_8f.sh
# and the README's TSN rows test the 5-segment TSN with --test_segments=8
_OFFICIAL_TEST_SEGMENTS = {"TSM_kinetics_RGB_resnet50_avg_segment5_e50": 8}


@dataclass(frozen=True)
class OfficialName:
    """The fields of an official TSM checkpoint file name (module docstring)."""

    stem: str
    dataset: str
    modality: str
    arch: str
    shift: Optional[str] = None
    fold_div: Optional[int] = None
    place: Optional[str] = None
    temporal_pool: bool = False
    non_local: bool = False
    num_segments: Optional[int] = None
    dense: bool = False

    @classmethod
    def parse(cls, name: PathLike) -> Optional["OfficialName"]:
        """The fields of file ``name``, or None when it is not an official name; ValueError for
        a modality other than RGB or Flow."""
        stem = Path(name).name.split(".")[0]
        tokens = stem.split("_")
        if len(tokens) < 4 or tokens[0] != "TSM":
            return None
        if tokens[2] not in ("RGB", "Flow"):
            raise ValueError(
                f"{Path(name).name}: modality {tokens[2]!r} is not supported "
                "(RGB or Flow; Flow's channels come from its first conv)"
            )
        rest = tokens[4:]
        fields: dict = {
            "temporal_pool": "tpool" in rest,
            "non_local": "nl" in rest,
            "dense": "dense" in rest,
        }
        for i, tok in enumerate(rest):
            if re.fullmatch(r"shift\d+", tok):
                fields.update(shift="offline", fold_div=int(tok[len("shift") :]))
                if i + 1 < len(rest) and rest[i + 1] in ("block", "blockres"):
                    fields["place"] = rest[i + 1]
            elif re.fullmatch(r"segment\d+", tok):
                fields["num_segments"] = int(tok[len("segment") :])
        return cls(stem, tokens[1], tokens[2], tokens[3], **fields)

    def config_fields(self) -> dict:
        """The :class:`~tsm_apps.models.recognizer.RecognizerConfig` fields the name encodes."""
        cfg: dict = {
            "arch": self.arch,
            "shift": self.shift,
            "non_local": self.non_local,
            "temporal_pool": self.temporal_pool,
        }
        if self.shift is not None:
            cfg["fold_div"] = self.fold_div
            if self.place is not None:
                cfg["place"] = self.place
        if self.num_segments is not None:
            cfg["num_segments"] = self.num_segments
        return cfg

    @property
    def test_segments(self) -> Optional[int]:
        """``T`` the official scripts test this checkpoint with (module docstring)."""
        return _OFFICIAL_TEST_SEGMENTS.get(self.stem, self.num_segments)

    @property
    def bundled_list(self) -> Optional[str]:
        """Key of the bundled class list of the name's data set (None: none bundled)."""
        return _OFFICIAL_DATASETS.get(self.dataset.lower())


def parse_official_name(name: PathLike) -> dict:
    """Config fields encoded in an official checkpoint file name, or ``{}`` if not one."""
    parsed = OfficialName.parse(name)
    return parsed.config_fields() if parsed else {}


def official_test_segments(name: PathLike) -> Optional[int]:
    """``T`` a checkpoint file is tested with when its name prescribes one (official names),
    else None (the checkpoint's own ``num_segments``)."""
    parsed = OfficialName.parse(name)
    return parsed.test_segments if parsed else None


def bundled_list_for(file_name: PathLike) -> Optional[str]:
    """Key of the bundled class list a checkpoint file name implies, or None: an official name's
    data set; mmaction2 names containing ``kinetics400``/``k400``/``sthv1``/``sthv2`` between
    ``_``, ``-`` or ``.``."""
    stem = Path(file_name).name
    if stem.startswith("TSM_"):
        parsed = OfficialName.parse(stem)
        return parsed.bundled_list if parsed else None
    lowered = stem.lower()
    for key, name in _MMACTION2_DATASETS:
        if re.search(rf"(^|[_\-.]){key}([_\-.]|$)", lowered):
            return name
    return None


def _stored_names(ckpt: Mapping) -> list:
    meta = ckpt.get("meta")
    names = meta.get("classes") if isinstance(meta, Mapping) else None
    if isinstance(names, (list, tuple)) and all(isinstance(n, str) for n in names):
        return list(names)
    return []


def class_names(
    num_classes: int,
    checkpoint: Optional[Mapping] = None,
    classes_file: Optional[PathLike] = None,
    file_name: Optional[PathLike] = None,
) -> list:
    """``num_classes`` names for a model's outputs, in this order: ``classes_file`` (its count
    must be ``num_classes``, else ValueError naming both), the names stored in ``checkpoint``
    (a dict read by :func:`tsm_apps.io.read_checkpoint`), the bundled list ``file_name`` implies
    (when its count matches), ``"class <i>"``."""
    if int(num_classes) < 1:
        raise ValueError(f"num_classes must be >= 1, got {num_classes}")
    n = int(num_classes)
    if classes_file is not None:
        names = read_class_file(classes_file)
        if len(names) != n:
            raise ValueError(
                f"{classes_file}: {len(names)} class names but the model has {n} classes"
            )
        return names
    names = _stored_names(checkpoint or {})
    if len(names) == n:
        return names
    key = bundled_list_for(file_name) if file_name else None
    if key is not None:
        names = bundled_classes(key)
        if len(names) == n:
            return names
    return [f"class {i}" for i in range(n)]


def official_protocol(name: PathLike = "", crop_size: int = 224) -> TestProtocol:
    """The official repository's test protocol for a checkpoint file ``name``: 1 clip, centre
    crop of the shorter side :func:`~tsm_apps.data.protocol.official_scale_size`; ``_dense``
    names: 10 dense clips x 3 full-resolution crops (the authors' test logs)."""
    parsed = OfficialName.parse(name) if name else None
    full = official_scale_size(crop_size)
    if parsed is not None and parsed.dense:
        return TestProtocol(
            "official",
            "dense",
            DENSE_TEST_CLIPS,
            full,
            full,
            3,
            source="test_models.py --dense_sample --full_res --test_crops 3",
        )
    return TestProtocol(
        "official",
        scale_size=full,
        crop_size=crop_size,
        source="test_models.py, 1 clip, centre crop",
    )


def legacy_protocol(train_config: Mapping) -> TestProtocol:
    """What our older checkpoints (without ``meta['test_protocol']``) were validated on."""
    size = int(train_config.get("size", 224))
    return TestProtocol(
        "tsm_apps",
        scale_size=size,
        crop_size=size,
        resize="torch",
        source="training's validation (checkpoint without a recorded protocol)",
    )


def protocol_for(layout: str, checkpoint: Mapping, name: PathLike = "") -> TestProtocol:
    """The test protocol of a checkpoint read by :func:`tsm_apps.io.read_checkpoint`, given its
    key ``layout`` (:func:`tsm_apps.checkpoint.layouts.detect_layout`) and file ``name``."""
    meta = checkpoint.get("meta") if isinstance(checkpoint.get("meta"), Mapping) else {}
    if layout == "tsm_apps":
        if isinstance(meta.get("test_protocol"), Mapping):
            return TestProtocol.from_dict(meta["test_protocol"])
        train = meta.get("train_config")
        if isinstance(train, Mapping) and train.get("size"):
            return legacy_protocol(train)
        return TestProtocol("tsm_apps", source="default (no training record)")
    if layout == "mmaction2":
        return mmaction2_protocol(meta.get("cfg") if isinstance(meta.get("cfg"), str) else None)
    if layout == "official" or Path(name).name.startswith("TSM_"):
        return official_protocol(name)
    return TestProtocol("default", source="default (official-style)")
