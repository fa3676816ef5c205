"""Python config text (mmengine / mmaction2 / mmdet style) read as data, never executed.

mmengine stores a run's resolved config in checkpoints as Python source (``meta['cfg']``) and
writes ``config.py`` into work dirs; executing such text from a file a user hands over would run
arbitrary code. :func:`read_config_text` instead evaluates the top-level assignments with a small
literal evaluator: constants, lists, tuples, dicts, ``dict(...)``/``list(...)``/``tuple(...)``
calls, names assigned earlier, unary minus and arithmetic on numbers, strings and lists.
Assignments using anything else (imports, other calls, attributes, lambdas) are left out and
named in the result's ``"__skipped__"`` list; nothing is ever run.
"""
from __future__ import annotations

import ast
import operator
from typing import Any, Dict

__all__ = ["read_config_text", "UnsafeExpression"]

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
           ast.Pow: operator.pow}
_CALLS = {"dict": dict, "list": list, "tuple": tuple}
_NAMES = {"True": True, "False": False, "None": None}


class UnsafeExpression(ValueError):
    """An expression the literal evaluator does not evaluate (it would need running code)."""


def _eval(node: ast.AST, scope: Dict[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = [_eval(e, scope) for e in node.elts]
        return items if isinstance(node, ast.List) else (
            tuple(items) if isinstance(node, ast.Tuple) else set(items))
    if isinstance(node, ast.Dict):
        out = {}
        for k, v in zip(node.keys, node.values):
            if k is None:  # {**other}
                out.update(_eval(v, scope))
            else:
                out[_eval(k, scope)] = _eval(v, scope)
        return out
    if isinstance(node, ast.Name):
        if node.id in scope:
            return scope[node.id]
        if node.id in _NAMES:
            return _NAMES[node.id]
        raise UnsafeExpression(f"name {node.id!r} is not defined above it")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _eval(node.operand, scope)
        return -v if isinstance(node.op, ast.USub) else +v
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)](_eval(node.left, scope), _eval(node.right, scope))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in _CALLS and node.func.id not in scope:
        args = [_eval(a, scope) for a in node.args]
        kwargs = {}
        for kw in node.keywords:
            if kw.arg is None:
                kwargs.update(_eval(kw.value, scope))
            else:
                kwargs[kw.arg] = _eval(kw.value, scope)
        return _CALLS[node.func.id](*args, **kwargs)
    raise UnsafeExpression(f"{type(node).__name__} at line {getattr(node, 'lineno', '?')}")


def read_config_text(text: str, where: str = "config") -> Dict[str, Any]:
    """``{name: value}`` of the top-level assignments of ``text`` (see the module docstring).

    ``where`` names the source in errors (a SyntaxError becomes one ValueError line). Names whose
    value could not be read as data are listed under ``"__skipped__"``.
    """
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        raise ValueError(f"{where}: not valid Python config text (line {e.lineno}: {e.msg})") \
            from None
    scope: Dict[str, Any] = {}
    skipped = []
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets):
            try:
                value = _eval(stmt.value, scope)
            except (UnsafeExpression, TypeError, ArithmeticError, ValueError):
                skipped += [t.id for t in stmt.targets]
                continue
            for t in stmt.targets:
                scope[t.id] = value
    scope["__skipped__"] = skipped
    return scope
