"""Checkpoints of our own format, written atomically and always loaded with ``weights_only=True``.

Our format (a plain dict of tensors and Python scalars/containers, so ``weights_only`` loads it)::

    {"format": "tsm_apps.recognizer/1", "config": RecognizerConfig.to_dict(),
     "state_dict": {...}, "meta": {...}, <training state: "optimizer", "scheduler", ...>}

Foreign layouts (official TSM repository, mmaction2, torchvision / mmpretrain ImageNet ResNets)
are mapped in :mod:`tsm_apps.checkpoint.layouts`; :func:`load_checkpoint` builds the model that
any of them defines, :func:`load_weights` loads one into a model that already exists (and says
precisely why it does not fit).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from torch import Tensor, nn

from ..io import atomic_save, read_checkpoint  # noqa: F401  (re-exported)
from ..models.recognizer import Recognizer, RecognizerConfig, recognizer_from_config
from .identity import parse_official_name
from .layouts import (
    IMAGENET_LAYOUTS,
    align_to,
    detect_layout,
    infer_structure,
    mmaction2_meta_config,
    to_our_keys,
)

FORMAT = "tsm_apps.recognizer/1"
_MAX_LISTED = 12  # keys listed per category in mismatch errors
_WRAPPERS = ("state_dict", "model")  # where checkpoints of other tools keep the weights
log = logging.getLogger(__name__)


def save_checkpoint(
    path: str | os.PathLike, model: nn.Module, meta: dict | None = None, **training_state: Any
) -> Path:
    """Save ``model`` (a :class:`~tsm_apps.models.recognizer.Recognizer`, possibly DDP-wrapped)."""
    model = getattr(model, "module", model)
    obj = {
        "format": FORMAT,
        "config": model.config.to_dict(),
        "state_dict": {k: v.detach().cpu() for k, v in model.state_dict().items()},
        "meta": dict(meta or {}),
    }
    obj.update(training_state)
    return atomic_save(obj, path)


def state_dict_of(ckpt: dict, path: str | os.PathLike = "") -> dict:
    """The tensors of a checkpoint dict: its ``state_dict`` or ``model`` entry, or the dict
    itself; ValueError naming ``path`` when none is a non-empty dict of tensors."""
    sd = next((ckpt[k] for k in _WRAPPERS if isinstance(ckpt.get(k), dict)), ckpt)
    if not isinstance(sd, dict) or not sd or not all(isinstance(v, Tensor) for v in sd.values()):
        where = f"checkpoint {path}" if str(path) else "checkpoint"
        raise ValueError(
            f"{where} holds no state dict: expected a 'state_dict' or 'model' "
            f"entry or a flat dict of tensors, got keys {sorted(map(str, ckpt))[:10]}"
        )
    return sd


def checkpoint_config(ckpt: dict, name: str = "") -> tuple:
    """``(layout, state dict in our keys, config fields)`` of a :func:`read_checkpoint` result.

    Config precedence: our stored config; else the official file name over the mmaction2 meta
    over what the keys imply.
    """
    if ckpt.get("format") == FORMAT:
        return "tsm_apps", dict(ckpt["state_dict"]), dict(ckpt["config"])
    sd = state_dict_of(ckpt)
    layout = detect_layout(sd)
    sd = to_our_keys(sd, layout)
    cfg = infer_structure(sd)
    if layout == "mmaction2":
        cfg.update(mmaction2_meta_config(ckpt.get("meta") or {}))
    cfg.update(parse_official_name(name))
    return layout, sd, cfg


def inspect_checkpoint(path: str | os.PathLike, classifier_for: str = "") -> tuple:
    """``(checkpoint dict, layout, config fields)`` of ``path``, read safely, before any model is
    built; errors name the file. With ``classifier_for`` (e.g. ``"tsm test needs a recognizer
    checkpoint"``), a checkpoint without a classifier is refused with that reason."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"checkpoint not found: {p}")
    ckpt = read_checkpoint(p)
    try:
        layout, _, fields = checkpoint_config(ckpt, p.name)
    except ValueError as e:
        raise ValueError(f"{p}: {e}") from None
    if classifier_for and "num_classes" not in fields:
        raise ValueError(f"{p}: {layout} layout without a classifier: {classifier_for}")
    return ckpt, layout, fields


def load_checkpoint(path: str | os.PathLike, **overrides: Any) -> Recognizer:
    """Build the recognizer a checkpoint defines and load its weights; returns it in eval mode.

    Reads our format, official TSM repository checkpoints (architecture from the official file
    name when present, else from the keys) and mmaction2 TSM checkpoints. ``overrides`` replace
    :class:`~tsm_apps.models.recognizer.RecognizerConfig` fields (e.g. ``num_segments=16``,
    ``shift='online'``). Raises ValueError listing missing/unexpected keys and shape conflicts.
    """
    path = Path(path)
    return build_from_checkpoint(read_checkpoint(path), path, **overrides)


def build_from_checkpoint(ckpt: dict, path: str | os.PathLike, **overrides: Any) -> Recognizer:
    """:func:`load_checkpoint` of a checkpoint already read (``path`` names it: the official file
    name carries its config)."""
    path = Path(path)
    layout, sd, fields = checkpoint_config(ckpt, path.name)
    fields.update(overrides)
    cfg = RecognizerConfig.from_dict(fields)
    model = recognizer_from_config(cfg)
    _load_checked(model, sd, f"checkpoint {path} ({layout} layout)")
    return model.eval()


def load_weights(
    model: nn.Module,
    path: str | os.PathLike,
    ignore: Sequence[str] = (),
    checkpoint: Optional[dict] = None,
) -> dict:
    """Load a checkpoint of any known layout into an existing ``model``; returns the raw checkpoint.

    ``checkpoint``: the file already read by :func:`read_checkpoint` (it is not read again).
    Keys starting with a prefix in ``ignore`` (e.g. ``("fc.",)`` to fine-tune on new classes)
    are skipped on both sides. ValueError when the checkpoint does not fit the model. The
    layout and the loaded/skipped counts are logged (INFO).
    """
    path = Path(path)
    ckpt = read_checkpoint(path) if checkpoint is None else checkpoint
    layout, sd, _ = checkpoint_config(ckpt, path.name)
    target = getattr(model, "module", model)
    if layout in IMAGENET_LAYOUTS:
        sd = align_to(sd, list(target.state_dict()))
    config = getattr(target, "config", None)
    what = f"checkpoint {path} ({layout} layout)"
    if config is not None:
        what += f" vs the requested model (arch={config.arch}, num_classes={config.num_classes})"
    _load_checked(target, sd, what, tuple(ignore))
    kept = [k for k in sd if not k.startswith(tuple(ignore))]
    line = (
        f"loaded {path}: {layout} layout, {len(kept)} tensors loaded, 0 missing, "
        f"{len(sd) - len(kept)} skipped ({', '.join(ignore) or 'none'})"
    )
    log.info(line)
    return ckpt


def backbone_weights(path: str | os.PathLike, target_keys: Sequence[str]) -> tuple:
    """``(layout, weights, dropped)``: the backbone tensors of a checkpoint of any known layout,
    keyed like ``target_keys`` (a trunk's own keys, no ``backbone.`` prefix; ImageNet layouts
    aligned to shifted convs by :func:`~.layouts.align_to`); ``dropped`` counts the classifier
    and other non-backbone tensors left out."""
    path = Path(path)
    layout, sd, _ = checkpoint_config(read_checkpoint(path), path.name)
    trunk = {k[len("backbone.") :]: v for k, v in sd.items() if k.startswith("backbone.")}
    if layout in IMAGENET_LAYOUTS:
        trunk = align_to(trunk, target_keys)
    return layout, trunk, len(sd) - len(trunk)


def state_dict_mismatch(
    model: nn.Module, sd: Mapping[str, Tensor], ignore: Sequence[str] = ()
) -> tuple:
    """``(missing, unexpected, conflicts)``; conflicts are ``(key, ckpt shape, model shape)``.

    BatchNorm ``num_batches_tracked`` counters absent from old checkpoints are not missing.
    """
    own = {k: v for k, v in model.state_dict().items() if not k.startswith(tuple(ignore))}
    sd = {k: v for k, v in sd.items() if not k.startswith(tuple(ignore))}
    missing = sorted(k for k in own if k not in sd and not k.endswith("num_batches_tracked"))
    unexpected = sorted(k for k in sd if k not in own)
    conflicts = [
        (k, tuple(v.shape), tuple(own[k].shape))
        for k, v in sd.items()
        if k in own and v.shape != own[k].shape
    ]
    return missing, unexpected, conflicts


def _listed(title: str, items: list) -> str:
    more = f", ... and {len(items) - _MAX_LISTED} more" if len(items) > _MAX_LISTED else ""
    return f"{title} ({len(items)}): {', '.join(items[:_MAX_LISTED])}{more}"


def _load_checked(
    model: nn.Module, sd: Mapping[str, Tensor], what: str, ignore: tuple = ()
) -> None:
    """Load ``sd`` into ``model``; a mismatch is one line naming ``what`` and listing the
    missing and unexpected keys and the shape conflicts."""
    missing, unexpected, conflicts = state_dict_mismatch(model, sd, ignore)
    if missing or unexpected or conflicts:
        parts = [
            _listed(title, items)
            for title, items in (
                ("missing keys", missing),
                ("unexpected keys", unexpected),
                (
                    "shape conflicts",
                    [f"{k}: checkpoint {tuple(a)} vs model {tuple(b)}" for k, a, b in conflicts],
                ),
            )
            if items
        ]
        raise ValueError(f"{what} does not match the model: {'; '.join(parts)}")
    own = model.state_dict()
    full = {k: v for k, v in sd.items() if not k.startswith(ignore)}
    full.update({k: v for k, v in own.items() if k not in full})
    model.load_state_dict(full, strict=True)
