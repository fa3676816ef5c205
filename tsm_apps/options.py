"""Command-line options built from a typed dataclass: one way for every ``tsm`` sub-command.

Each field becomes ``--field-name`` (``segments`` -> ``--segments``), typed from its annotation;
``bool`` fields take ``--name`` / ``--no-name``; ``Optional[X]`` fields default to ``None``
("the checkpoint's own value"). Help comes from the field's ``metadata["help"]`` or, for the
ideas every command shares, from :data:`SHARED_HELP`, so the same idea has the same name and
the same words in ``tsm train``, ``tsm test``, ``tsm dissect``, ``tsm detect`` and ``tsm ui``.
Field metadata: ``help``, ``choices``, ``positional`` (an argument, not a flag), ``flag``
(the flag's name when it is not the field's: ``"mg-steps"``), ``aliases`` (extra flags),
``hidden_aliases`` (deprecated spellings still accepted, left out of ``--help``),
``hidden_negations`` (hidden flags that set a ``bool`` field to ``False``), ``skip`` (not on the
command line), ``type`` (the parser of one value, e.g. comma-separated numbers for a ``list``),
and argparse's ``nargs``, ``const``, ``action``, ``metavar`` passed through (e.g. mmengine's
``DictAction`` for ``--cfg-options``, ``"append"`` with the item ``type`` for a repeatable
option).

A field whose type is itself a dataclass is a *section* (``TrainConfig.multigrid``): its fields
become options too, shown under the section's heading, their ``dest`` ``"section.field"``;
:func:`options_from` and :func:`given_options` rebuild the nesting. ``given_only=True`` leaves
options that were not given out of the parsed namespace (defaults still shown in the help), for
commands that layer a preset and a config file under the flags.
"""

from __future__ import annotations

import argparse
import dataclasses
import typing
from typing import Any, Iterable

__all__ = [
    "SHARED_HELP",
    "add_options",
    "from_mapping",
    "given_options",
    "numbers",
    "option",
    "options_from",
]

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
    "progress": "progress bars (drawn on stderr when it is a terminal)",
    "seed": "random seed",
}


def option(help: str = "", **meta: Any) -> dict:
    """``field(**option("text", choices=...))``: a field's help and metadata (module docstring);
    without ``help`` the field takes :data:`SHARED_HELP`'s words for its name."""
    return {"metadata": {"help": help, **meta} if help else meta}


def numbers(text: str) -> list:
    """``"20,40"`` -> ``[20.0, 40.0]``: the ``type`` of a list option (argparse reports a bad
    value as a usage error, exit 2)."""
    try:
        return [float(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated numbers, got {text!r}"
        ) from None


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _base_type(tp: Any) -> tuple:
    """``(type, optional)`` of an annotation (``Optional[int]`` -> ``(int, True)``)."""
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    if typing.get_origin(tp) is typing.Union and len(args) == 1:
        return args[0], True
    return tp, False


def _section(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    return None if f.default_factory is dataclasses.MISSING else f.default_factory()


def add_options(
    parser: Any, cls: type, skip: Iterable[str] = (), given_only: bool = False, prefix: str = ""
) -> Any:
    """Add one option per field of dataclass ``cls`` to ``parser`` (module docstring);
    ``prefix``: the dotted section of ``cls`` inside the command's dataclass."""
    hints = typing.get_type_hints(cls)
    skip = set(skip)
    for f in dataclasses.fields(cls):
        meta = f.metadata
        if f.name in skip or meta.get("skip"):
            continue
        tp, optional = _base_type(hints[f.name])
        if _section(tp):
            group = parser.add_argument_group(meta.get("title", f.name), meta.get("help"))
            add_options(group, tp, given_only=given_only, prefix=f"{prefix}{f.name}.")
            continue
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        default = None if required else _default(f)
        dest = prefix + f.name
        # help is plain text: a % (e.g. "20% of pixels") must not reach argparse's % formatting
        text = meta.get("help", SHARED_HELP.get(f.name, "")).replace("%", "%%")
        if meta.get("positional"):
            parser.add_argument(f.name, help=text, **{k: meta[k] for k in PASSED if k in meta})
            continue
        flags = [_flag(meta.get("flag", f.name)), *meta.get("aliases", ())]
        hidden = list(meta.get("hidden_aliases", ()))
        value = argparse.SUPPRESS if given_only else default
        if tp is bool:
            parser.add_argument(
                *flags,
                dest=dest,
                action=argparse.BooleanOptionalAction,
                default=value,
                help=f"{text} (default: {default})".strip(),
            )
            for flag in hidden:
                parser.add_argument(
                    flag, dest=dest, action="store_true", default=value, help=argparse.SUPPRESS
                )
            for flag in meta.get("hidden_negations", ()):
                parser.add_argument(
                    flag, dest=dest, action="store_false", default=value, help=argparse.SUPPRESS
                )
            continue
        shown = "" if required or default in (None, {}, []) else f" (default: {default})"
        extra = {k: meta[k] for k in PASSED if k in meta}
        # a repeatable option annotated ``list`` takes strings (argparse would call list(value))
        element = str if extra.get("action") == "append" and tp is list else tp
        kind = (
            {}
            if extra.get("action") not in (None, "append")
            else {"type": meta.get("type", element)}
        )
        if prefix and "metavar" not in extra and not meta.get("choices"):
            extra["metavar"] = meta.get("flag", f.name).upper().replace("-", "_")
        common = dict(dest=dest, default=value, choices=meta.get("choices"), **kind, **extra)
        parser.add_argument(*flags, required=required, help=(text + shown).strip(), **common)
        for flag in hidden:
            parser.add_argument(flag, help=argparse.SUPPRESS, **common)
    return parser


def given_options(args: argparse.Namespace, names: Iterable[str] = ()) -> dict:
    """The parsed options as a nested mapping (``"multigrid.steps"`` -> ``{"multigrid":
    {"steps": ...}}``); with ``names``, only those top-level keys."""
    out: dict = {}
    keep = set(names)
    for key, value in vars(args).items():
        *sections, name = key.split(".")
        if keep and (sections[0] if sections else name) not in keep:
            continue
        node = out
        for sec in sections:
            node = node.setdefault(sec, {})
        node[name] = value
    return out


def options_from(cls: type, args: argparse.Namespace, **extra: Any) -> Any:
    """An instance of ``cls`` from the parsed ``args`` (fields not on the command line keep
    their defaults; sections are rebuilt from their ``"section.field"`` options; ``extra`` sets
    fields directly)."""
    hints = typing.get_type_hints(cls)
    given = given_options(args, [f.name for f in dataclasses.fields(cls)])
    for f in dataclasses.fields(cls):
        tp = _base_type(hints[f.name])[0]
        if _section(tp) and isinstance(given.get(f.name), dict):
            given[f.name] = dataclasses.replace(_default(f) or tp(), **given[f.name])
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
