"""The ``tsm`` command. Its sub-commands are the ``tsm.commands`` entry points declared in
pyproject.toml (``detect = "detection.cli:main"``), so a package plugs a command in without
this module naming it, and a command's package is imported only when that command runs
(``tsm train`` never imports mmdet).

Each sub-command is ``main(argv: list[str]) -> int`` beside a ``build_parser()``. Bad input
(``UserError``, ``ValueError``, ``FileNotFoundError``...) prints ``tsm <cmd>: error: ...`` and
exits 2; set ``TSM_DEBUG=1`` to see the traceback. Log records go to stderr from the level in
``TSM_LOG_LEVEL`` (default ``INFO``; :mod:`tsm_apps.logs`).
"""

from __future__ import annotations

import ast
import importlib.util
import os
import sys
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

from .errors import UserError
from .logs import console_log

GROUP = "tsm.commands"
USER_ERRORS = (
    UserError,
    ValueError,
    TypeError,
    FileNotFoundError,
    NotADirectoryError,
    PermissionError,
    KeyError,
)


def commands() -> dict[str, EntryPoint]:
    """``{name: entry point}`` of every installed sub-command, by name."""
    return {ep.name: ep for ep in sorted(entry_points(group=GROUP), key=lambda ep: ep.name)}


def summary(ep: EntryPoint) -> str:
    """The first line of the command module's docstring, read from its source without importing
    it (importing ``detection`` would load mmdet just to print the help)."""
    top, *rest = ep.module.split(".")
    spec = importlib.util.find_spec(top)
    if spec is None or not spec.submodule_search_locations:
        return ""
    base = Path(next(iter(spec.submodule_search_locations)), *rest)
    source = base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
    try:
        doc = ast.get_docstring(ast.parse(source.read_text())) or ""
    except (OSError, SyntaxError):
        return ""
    line = doc.strip().splitlines()[0].replace("``", "") if doc.strip() else ""
    head, sep, tail = line.partition(": ")
    return tail if sep and "tsm " in head else line  # "tsm train: ..." -> "..."


def packages(found: dict) -> list[str]:
    """The top-level packages of the commands in ``found`` and of ``tsm`` itself, sorted: the
    project's loggers (:mod:`tsm_apps.logs`)."""
    return sorted(
        {__name__.partition(".")[0], *(ep.module.partition(".")[0] for ep in found.values())}
    )


def _usage(found: dict) -> str:
    lines = [
        "usage: tsm <command> [options]   (tsm <command> --help for its options)",
        "",
        "commands:",
    ]
    lines += [f"  {name:<8} {summary(ep)}" for name, ep in found.items()]
    if not found:
        lines.append(f"  (none: no '{GROUP}' entry points; install the project: make test)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    found = commands()
    if not argv or argv[0] in ("-h", "--help"):
        print(_usage(found))
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    if cmd not in found:
        print(f"tsm: error: unknown command {cmd!r}\n\n{_usage(found)}", file=sys.stderr)
        return 2
    try:
        with console_log(packages=packages(found)):
            return int(found[cmd].load()(rest) or 0)
    except USER_ERRORS as e:
        if os.environ.get("TSM_DEBUG"):
            raise
        msg = e.args[0] if isinstance(e, KeyError) and e.args else e
        print(f"tsm {cmd}: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"tsm {cmd}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
