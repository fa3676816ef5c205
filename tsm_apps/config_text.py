"""Python config text (mmengine / mmaction2 / mmdet style) read as data, never executed.

mmengine stores a run's resolved config in checkpoints as Python source (``meta['cfg']``) and
writes ``config.py`` into work dirs; executing such text from a file a user hands over would run
arbitrary code. :func:`read_config_text` instead evaluates the top-level assignments with a small
literal evaluator, in one of two grammars:

* lenient (default, for the config a checkpoint carries): constants, lists, tuples, sets, dicts,
  ``dict(...)``/``list(...)``/``tuple(...)`` calls, names assigned earlier, unary minus and
  arithmetic on numbers, strings and lists. Assignments using anything else (imports, other
  calls, attributes, lambdas) are left out and named in the result's ``"__skipped__"`` list.
* ``plain=True`` (for a config that will be handed to mmengine, e.g. the resolved config a
  detection run leaves): only ``name = value`` lines whose values are constants, signed numbers,
  tuples, lists, dicts and ``dict(key=value, ...)``; anything else -- an import, a call, a name,
  arithmetic, a ``reserved`` name assigned -- raises :class:`ConfigRefused` naming the line.

Nothing is ever run.
"""

from __future__ import annotations

import ast
import operator
from typing import Any, Dict, Sequence

__all__ = ["read_config_text", "UnsafeExpression", "ConfigRefused"]

_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_CALLS = {"dict": dict, "list": list, "tuple": tuple}
_NAMES = {"True": True, "False": False, "None": None}
PLAIN_DATA = "plain data only (constants, tuples, lists, dicts)"


class UnsafeExpression(ValueError):
    """An expression the literal evaluator does not evaluate (it would need running code)."""


class ConfigRefused(ValueError):
    """A config that is not plain data; the message names the file and the line."""


def _items(node: ast.AST, scope: Dict[str, Any], plain: bool) -> Any:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = [_eval(e, scope, plain) for e in node.elts]
        return (
            items
            if isinstance(node, ast.List)
            else (tuple(items) if isinstance(node, ast.Tuple) else set(items))
        )
    out = {}
    for k, v in zip(node.keys, node.values):
        if k is None and not plain:  # {**other}
            out.update(_eval(v, scope, plain))
        elif k is None:
            raise UnsafeExpression("** in a dict")
        else:
            out[_eval(k, scope, plain)] = _eval(v, scope, plain)
    return out


def _call(node: ast.Call, scope: Dict[str, Any], plain: bool) -> Any:
    if plain and (node.func.id != "dict" or node.args or any(k.arg is None for k in node.keywords)):
        raise UnsafeExpression(f"call of {node.func.id}")
    args = [_eval(a, scope, plain) for a in node.args]
    kwargs: dict = {}
    for kw in node.keywords:
        if kw.arg is None:
            kwargs.update(_eval(kw.value, scope, plain))
        else:
            kwargs[kw.arg] = _eval(kw.value, scope, plain)
    return _CALLS[node.func.id](*args, **kwargs)


def _eval(node: ast.AST, scope: Dict[str, Any], plain: bool = False) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple, ast.Dict)) or (
        isinstance(node, ast.Set) and not plain
    ):
        return _items(node, scope, plain)
    if isinstance(node, ast.Name) and not plain:
        if node.id in scope:
            return scope[node.id]
        if node.id in _NAMES:
            return _NAMES[node.id]
        raise UnsafeExpression(f"name {node.id!r} is not defined above it")
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, (ast.USub, ast.UAdd))
        and (
            not plain
            or isinstance(node.operand, ast.Constant)
            and isinstance(node.operand.value, (int, float))
        )
    ):
        v = _eval(node.operand, scope, plain)
        return -v if isinstance(node.op, ast.USub) else +v
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS and not plain:
        return _BINOPS[type(node.op)](_eval(node.left, scope), _eval(node.right, scope))
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _CALLS
        and node.func.id not in scope
    ):
        return _call(node, scope, plain)
    raise UnsafeExpression(f"{type(node).__name__} at line {getattr(node, 'lineno', '?')}")


def _refuse(where: str, node: ast.AST, expected: str) -> None:
    code = ast.unparse(node).splitlines()[0]
    raise ConfigRefused(
        f"{where}:{getattr(node, 'lineno', '?')}: `{code[:60]}` is not "
        f"allowed; a config is read as data: {expected}"
    )


def _plain_statement(stmt: ast.stmt, where: str, reserved: Sequence[str]) -> str:
    """The name a plain config's statement assigns ("" for a docstring); refuses the rest."""
    if (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    ):
        return ""
    if not (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
    ):
        _refuse(where, stmt, "only `name = value` lines")
    name = stmt.targets[0].id
    if name in reserved:
        _refuse(where, stmt, f"`{name}` (only resolved configs are read)")
    return name


def read_config_text(
    text: str, where: str = "config", plain: bool = False, reserved: Sequence[str] = ()
) -> Dict[str, Any]:
    """``{name: value}`` of the top-level assignments of ``text`` (see the module docstring).

    ``where`` names the source in errors (a SyntaxError becomes one ValueError line). Lenient:
    names whose value could not be read as data are listed under ``"__skipped__"``.
    ``plain=True``: the plain-data grammar, anything else (or assigning a ``reserved`` name)
    raises :class:`ConfigRefused` naming ``where`` and the line; no ``"__skipped__"`` entry.
    """
    try:
        tree = ast.parse(text, filename=where)
    except SyntaxError as e:
        if plain:
            raise ConfigRefused(f"{where}:{e.lineno}: not a Python config ({e.msg})") from None
        raise ValueError(
            f"{where}: not valid Python config text (line {e.lineno}: {e.msg})"
        ) from None
    scope: Dict[str, Any] = {}
    skipped = []
    for stmt in tree.body:
        if plain:
            name = _plain_statement(stmt, where, reserved)
            if name:
                try:
                    scope[name] = _eval(stmt.value, scope, plain=True)
                except UnsafeExpression:
                    _refuse(where, stmt.value, PLAIN_DATA)
            continue
        if isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets):
            try:
                value = _eval(stmt.value, scope)
            except (UnsafeExpression, TypeError, ArithmeticError, ValueError):
                skipped += [t.id for t in stmt.targets]
                continue
            for t in stmt.targets:
                scope[t.id] = value
    if not plain:
        scope["__skipped__"] = skipped
    return scope
