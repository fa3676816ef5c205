"""Command-line options built from a typed dataclass: one way for every ``tsm`` sub-command.

Each field becomes ``--field-name`` (``segments`` -> ``--segments``), typed from its annotation;
``bool`` fields take ``--name`` / ``--no-name``; ``Optional[X]`` fields default to ``None``
("the checkpoint's own value"). Help comes from the field's ``metadata["help"]`` or, for the
ideas every command shares, from :data:`SHARED_HELP`, so the same idea has the same name and
the same words in ``tsm train``, ``tsm test``, ``tsm dissect``, ``tsm detect`` and ``tsm ui``.
Field metadata: ``help``, ``choices``, ``positional`` (an argument, not a flag), ``aliases``
(extra flags), ``skip`` (not on the command line), and argparse's ``nargs``, ``const``,
``action``, ``metavar`` passed through (e.g. mmengine's ``DictAction`` for ``--cfg-options``,
``"append"`` with the item ``type`` for a repeatable option).
"""
from __future__ import annotations

import argparse
import dataclasses
import typing
from typing import Any, Iterable

__all__ = ["SHARED_HELP", "add_options", "from_mapping", "option", "options_from"]

PASSED = ("nargs", "const", "action", "metavar")  # argparse keywords taken from field metadata

SHARED_HELP = {
    "checkpoint": "a recognizer checkpoint (.pth): ours, the official TSM repository's or "
                  "mmaction2's",
    "data": "a video, a folder of videos or frame folders, a list file (path [num_frames "
            "[label]]), a folder holding val.txt, or a Something-Something-v2 JSON",
    "out": "where the results go",
    "classes": "class names: one a line, or SSv2 labels.json (default: the checkpoint's, or a "
               "bundled list picked by the official file name)",
    "segments": "frames per clip, T (default: the checkpoint's)",
    "clips": "clips per video (default: the checkpoint's test protocol)",
    "crops": "views per clip: 1 centre, 3 along the longer side, 10 (default: the protocol's)",
    "size": "crop size in pixels (default: the protocol's)",
    "scale_size": "shorter side before cropping (default: the protocol's)",
    "view": "'frame': the whole resized frame instead of the protocol's crops",
    "device": "auto (CUDA when present), cpu, cuda, cuda:1, ...",
    "progress": "progress bars",
    "seed": "random seed",
}


def option(help: str = "", **meta: Any) -> dict:
    """``field(**option("text", choices=...))``: a field's help and metadata (module docstring);
    without ``help`` the field takes :data:`SHARED_HELP`'s words for its name."""
    return {"metadata": {"help": help, **meta} if help else meta}


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _base_type(tp: Any) -> tuple:
    """``(type, optional)`` of an annotation (``Optional[int]`` -> ``(int, True)``)."""
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    if typing.get_origin(tp) is typing.Union and len(args) == 1:
        return args[0], True
    return tp, False


def add_options(parser: argparse.ArgumentParser, cls: type,
                skip: Iterable[str] = ()) -> argparse.ArgumentParser:
    """Add one option per field of dataclass ``cls`` to ``parser`` (module docstring)."""
    hints = typing.get_type_hints(cls)
    skip = set(skip)
    for f in dataclasses.fields(cls):
        meta = f.metadata
        if f.name in skip or meta.get("skip"):
            continue
        tp, optional = _base_type(hints[f.name])
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        default = None if required else (f.default if f.default is not dataclasses.MISSING
                                         else f.default_factory())
        # help is plain text: a % (e.g. "20% of pixels") must not reach argparse's % formatting
        text = meta.get("help", SHARED_HELP.get(f.name, "")).replace("%", "%%")
        if meta.get("positional"):
            parser.add_argument(f.name, help=text, **{k: meta[k] for k in PASSED if k in meta})
            continue
        flags = [_flag(f.name), *meta.get("aliases", ())]
        if tp is bool:
            parser.add_argument(*flags, dest=f.name, action=argparse.BooleanOptionalAction,
                                default=default, help=f"{text} (default: {default})".strip())
            continue
        shown = "" if required or default in (None, {}, []) else f" (default: {default})"
        extra = {k: meta[k] for k in PASSED if k in meta}
        kind = {} if extra.get("action") not in (None, "append") else {"type": meta.get("type", tp)}
        parser.add_argument(*flags, dest=f.name, default=default, required=required,
                            choices=meta.get("choices"), help=(text + shown).strip(), **kind,
                            **extra)
    return parser


def options_from(cls: type, args: argparse.Namespace, **extra: Any) -> Any:
    """An instance of ``cls`` from the parsed ``args`` (fields not on the command line keep
    their defaults; ``extra`` sets fields directly)."""
    names = {f.name for f in dataclasses.fields(cls)}
    given = {k: v for k, v in vars(args).items() if k in names}
    given.update(extra)
    return cls(**given)


def from_mapping(cls: type, d: Any, where: str) -> Any:
    """``cls(**d)`` for a dataclass ``cls`` read from a file or a checkpoint: ``d`` must be a
    mapping whose keys are field names (else ``TypeError`` / ``ValueError`` naming ``where``)."""
    if not isinstance(d, typing.Mapping):
        raise TypeError(f"{where}: expected a mapping, got {type(d).__name__}")
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(d) - names)
    if unknown:
        raise ValueError(f"{where}: unknown keys {unknown}; expected some of {sorted(names)}")
    return cls(**dict(d))
