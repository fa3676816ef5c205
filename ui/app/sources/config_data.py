"""A detector's mmengine config read as data, never run as a program.

An mmengine config is a Python file, and loading it runs it. The config ``tsm detect train``
leaves in a work folder is the resolved one (``cfg.pretty_text``): only ``name = value`` lines
whose values are constants, tuples, lists, dicts and ``dict(key=value, ...)``. The app reads a
config only when it is such plain data (checked on the parsed text, nothing executed) and hands
mmengine a private copy of exactly the text it checked; anything else — an import, a call, a
``_base_`` file, a custom import other than this project's ``detection`` — is refused with one
line naming the file and the line.
"""
from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import Any

__all__ = ["ConfigRefused", "literal_config", "checked_copy"]

ALLOWED_CUSTOM_IMPORTS = ("detection",)
RESERVED = ("_base_", "dict")


class ConfigRefused(ValueError):
    """A config that is not plain data; the message names the file and the line."""


def literal_config(text: str, name: str) -> dict:
    """The variables of config ``text`` (file ``name``, for messages) when it is plain data."""
    try:
        tree = ast.parse(text, filename=name)
    except SyntaxError as e:
        raise ConfigRefused(f"{name}:{e.lineno}: not a Python config ({e.msg})") from None
    out: dict = {}
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and \
                isinstance(node.value.value, str):
            continue  # a docstring or comment string
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)):
            _refuse(name, node, "only `name = value` lines")
        target = node.targets[0].id
        if target in RESERVED:
            _refuse(name, node, f"`{target}` (the app reads only resolved configs)")
        out[target] = _value(node.value, name)
    imports = (out.get("custom_imports") or {}).get("imports", [])
    extra = [m for m in ([imports] if isinstance(imports, str) else imports)
             if str(m).split(".")[0] not in ALLOWED_CUSTOM_IMPORTS]
    if extra:
        raise ConfigRefused(f"{name}: custom_imports {extra}: only "
                            f"{list(ALLOWED_CUSTOM_IMPORTS)} may be imported")
    return out


def _value(node: ast.AST, name: str) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List)):
        items = [_value(e, name) for e in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else items
    if isinstance(node, ast.Dict) and None not in node.keys:
        return {_value(k, name): _value(v, name) for k, v in zip(node.keys, node.values)}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)) and \
            isinstance(node.operand, ast.Constant) and \
            isinstance(node.operand.value, (int, float)):
        return -node.operand.value if isinstance(node.op, ast.USub) else node.operand.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
            node.func.id == "dict" and not node.args and \
            all(k.arg is not None for k in node.keywords):
        return {k.arg: _value(k.value, name) for k in node.keywords}
    _refuse(name, node, "plain data only (constants, tuples, lists, dicts)")


def _refuse(name: str, node: ast.AST, expected: str) -> None:
    code = ast.unparse(node).splitlines()[0] if hasattr(ast, "unparse") else ""
    raise ConfigRefused(f"{name}:{getattr(node, 'lineno', '?')}: `{code[:60]}` is not "
                        f"allowed; a config is read as data: {expected}")


def checked_copy(config: Path, folder: Path) -> Path:
    """``folder/config.py`` holding exactly the text of ``config`` that :func:`literal_config`
    accepted (so what mmengine loads is what was checked)."""
    config = Path(config)
    text = config.read_text(encoding="utf-8")
    literal_config(text, str(config))
    out = Path(folder) / "config.py"
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    return out
