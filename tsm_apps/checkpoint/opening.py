"""Opening a checkpoint file: the one way every tool reads a recognizer checkpoint (``tsm test``,
dissection, the app, ``tsm export``, ``tsm train --pretrained``).

:func:`open_checkpoint` reads the file once, safely (:func:`tsm_apps.io.read_checkpoint`), and
either builds the recognizer the checkpoint defines, with its class names and test protocol
(:mod:`.identity`), or -- ``into=`` -- loads its weights into a recognizer that already exists
(a fine-tuning start: any known layout, ImageNet weights included).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, List, Optional

import torch
from torch import nn

from ..data.protocol import TestProtocol
from ..distributed import auto_device
from ..models.modality import set_input_channels
from .identity import class_names, official_test_segments, protocol_for
from .reading import build_from_checkpoint, inspect_checkpoint, load_weights, state_dict_of

__all__ = ["Checkpoint", "open_checkpoint", "open_online"]


@dataclass
class Checkpoint:
    """A recognizer and what its file says: the ``model`` (built: eval mode, on its device), its
    class ``names``, its test ``protocol``, the file, its key ``layout``, its input modality
    (``new_length`` frames a segment), the ``raw`` dict read and whether the fc came from the
    file (``fc_loaded``; False only for ``into=`` a model of other classes)."""

    model: nn.Module
    names: List[str]
    protocol: TestProtocol
    path: Path
    layout: str
    modality: str = "rgb"
    new_length: int = 1
    raw: dict = field(default_factory=dict, repr=False)
    fc_loaded: bool = True

    @property
    def num_segments(self) -> int:
        return int(self.model.config.num_segments)


def open_checkpoint(
    path: str | Path,
    classes: Optional[str] = None,
    protocol: Optional[TestProtocol] = None,
    device: Any = None,
    segments: Optional[int] = None,
    model_overrides: Optional[dict] = None,
    what: str = "testing needs a recognizer checkpoint",
    into: Optional[nn.Module] = None,
    **options: Any,
) -> Checkpoint:
    """Read ``path`` once, safely, and build its recognizer (``segments`` overrides ``T``, by
    default the checkpoint's test segments; ``model_overrides`` other config fields, e.g.
    ``{"shift": "online"}``) on ``device`` (default: :func:`tsm_apps.distributed.auto_device`),
    its class names (``classes``: a class file) and its test protocol (``protocol`` replaces it;
    ``options`` such as ``clips=10`` change it). ``what``: why a file without a classifier is
    refused (the error names the file).

    ``into``: a :class:`~tsm_apps.models.recognizer.Recognizer` to load the weights into instead
    (:func:`load_into`); it keeps its device (unless ``device`` is given) and its train/eval
    mode, and files without a classifier (ImageNet weights) are accepted.
    """
    path = Path(path)
    ckpt, layout, fields = inspect_checkpoint(path, "" if into is not None else what)
    if into is None:
        t = segments or official_test_segments(path.name)
        overrides = dict(model_overrides or {}, **({"num_segments": t} if t else {}))
        model = build_from_checkpoint(ckpt, path, **overrides)
        model = model.to(torch.device(device) if device is not None else auto_device()).eval()
        fc_loaded, num_classes = True, int(fields["num_classes"])
        channels = int(fields.get("in_channels", 3))
    else:
        fc_loaded = load_into(into, ckpt, path)
        model = into.to(torch.device(device)) if device is not None else into
        num_classes, channels = int(into.config.num_classes), int(into.config.in_channels)
    names = class_names(num_classes, ckpt, classes, file_name=path.name)
    proto = (protocol or protocol_for(layout, ckpt, path.name)).with_options(**options)
    modality, length = ("rgb", 1) if channels == 3 else ("flow", channels // 2)
    return Checkpoint(model, list(names), proto, path, layout, modality, length, ckpt, fc_loaded)


def first_conv_channels(ckpt: dict) -> int:
    """Input channels of a checkpoint's first conv (0 if none is found): the 4-D ``conv1``
    kernel outside the residual stages, or MobileNetV2's ``features.0.0``."""
    try:
        sd = state_dict_of(ckpt)
    except ValueError:
        return 0
    for k, v in sd.items():
        if (
            getattr(v, "dim", lambda: 0)() == 4
            and "layer" not in k
            and (k.endswith("conv1.weight") or k.endswith("features.0.0.weight"))
        ):
            return int(v.shape[1])
    return 0


def load_into(model: nn.Module, ckpt: dict, path: str | Path) -> bool:
    """Load checkpoint ``ckpt`` (read from ``path``) into ``model``, a fine-tuning start: any
    known layout; the fc stays fresh if the classes differ (returns whether the fc was loaded).

    A flow model (``in_channels = 2 * new_length``) from RGB weights (ImageNet or an RGB
    recognizer, AAVG's RGB->flow transfer): the weights load into a 3-channel first conv, which
    is then cross-modality initialised (TSN: mean over RGB, replicated).
    """
    fc = ckpt.get("state_dict", {}).get("fc.weight")
    same = fc is not None and tuple(fc.shape) == tuple(model.fc.weight.shape)
    want, have = model.config.in_channels, first_conv_channels(ckpt)
    if have and have != want:
        set_input_channels(model.backbone, have)
    load_weights(model, path, ignore=() if same else ("fc.",), checkpoint=ckpt)  # logs the layout
    set_input_channels(model.backbone, want)
    return same


def open_online(path: str | Path, **kw: Any) -> Checkpoint:
    """:func:`open_checkpoint` for streaming: a TSM checkpoint's recognizer with the causal
    (online) shift, whatever shift it was trained with (the weights are the same); a TSN as it
    is. The file is read once."""
    ck = open_checkpoint(path, **kw)
    if ck.model.config.shift in (None, "online"):
        return ck
    model = build_from_checkpoint(ck.raw, ck.path, shift="online", num_segments=ck.num_segments)
    return replace(ck, model=model.to(next(ck.model.parameters()).device).eval())
