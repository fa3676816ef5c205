"""The recipe reference table (``docs/recipes.md``) read as data, for the drift tests and
``tools/citations.py``.

The file has one section per recipe (``## <recipe>``: a detection config path or
``preset <name>``), each holding one Markdown table with the columns::

    | parameter | reference | ours | source | why ours differs |

``parameter`` is a dotted path into the resolved config (``optim_wrapper.optimizer.lr``,
``multigrid.steps``); ``reference`` is the reference value as a Python literal; ``ours`` is
empty when the recipe uses the reference value, else the value it uses (a deliberate
deviation), and then ``why ours differs`` must say why. ``source`` names the file and line (or
the paper section) the reference value comes from. Values are compared after
``ast.literal_eval``, floats with a relative tolerance of 1e-9.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping

TABLE = Path(__file__).resolve().parents[1] / "docs" / "recipes.md"
COLUMNS = ("parameter", "reference", "ours", "source", "why ours differs")


@dataclass(frozen=True)
class Row:
    recipe: str
    line: int
    parameter: str
    reference: Any
    ours: Any  # == reference when the recipe follows the reference
    source: str
    reason: str

    @property
    def deviates(self) -> bool:
        return not same(self.ours, self.reference)


def _literal(text: str, where: str) -> Any:
    text = text.strip().strip("`")
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise ValueError(f"{where}: {text!r} is not a Python literal") from None


def _cells(line: str) -> List[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def read_table(path: Path = TABLE) -> Dict[str, List[Row]]:
    """``{recipe: [Row, ...]}`` of every section of ``path``; ValueError naming the line of a
    malformed row (wrong columns, a non-literal value, a deviation without a reason, no source)."""
    out: Dict[str, List[Row]] = {}
    recipe = None
    for n, line in enumerate(path.read_text().splitlines(), start=1):
        where = f"{path.name}:{n}"
        if line.startswith("## "):
            recipe = line[3:].strip()
            out.setdefault(recipe, [])
            continue
        if recipe is None or not line.startswith("|") or set(line) <= set("|-: "):
            continue
        cells = _cells(line)
        if tuple(c.lower() for c in cells) == COLUMNS:
            continue
        if len(cells) != len(COLUMNS):
            raise ValueError(
                f"{where}: expected {len(COLUMNS)} columns {COLUMNS}, got {len(cells)}"
            )
        param, ref, ours, source, reason = cells
        reference = _literal(ref, where)
        value = _literal(ours, where) if ours else reference
        row = Row(recipe, n, param.strip("`"), reference, value, source, reason)
        if not source:
            raise ValueError(f"{where}: {param}: no source for the reference value")
        if row.deviates and not reason:
            raise ValueError(
                f"{where}: {param}: ours {value!r} differs from the reference "
                f"{reference!r} without a reason"
            )
        out[recipe].append(row)
    return out


def lookup(config: Any, dotted: str) -> Any:
    """The value at ``a.b.c`` of nested mappings / attributes / sequences (``steps.1``)."""
    node = config
    for part in dotted.split("."):
        if isinstance(node, Mapping):
            if part not in node:
                raise KeyError(f"{dotted}: no key {part!r} (have {sorted(map(str, node))[:12]})")
            node = node[part]
        elif isinstance(node, (list, tuple)) and part.lstrip("-").isdigit():
            node = node[int(part)]
        elif hasattr(node, part):
            node = getattr(node, part)
        else:
            raise KeyError(f"{dotted}: cannot resolve {part!r} in {type(node).__name__}")
    return node


def same(a: Any, b: Any) -> bool:
    """Equal values; floats (also inside lists/tuples/dicts) to a relative 1e-9; a list equals
    the tuple with the same items."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or (isinstance(a, bool) and isinstance(b, bool) and a == b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=0.0) or a == b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return set(a) == set(b) and all(same(a[k], b[k]) for k in a)
    return a == b


def drift(rows: List[Row], config: Any) -> List[str]:
    """One line per row whose resolved value is not the table's ``ours`` value."""
    bad = []
    for r in rows:
        try:
            got = lookup(config, r.parameter)
        except (KeyError, IndexError) as e:
            bad.append(f"{TABLE.name}:{r.line} {r.recipe}: {e}")
            continue
        if not same(got, r.ours):
            bad.append(
                f"{TABLE.name}:{r.line} {r.recipe}: {r.parameter} = {got!r}, the table "
                f"says {r.ours!r} (reference {r.reference!r}, {r.source})"
            )
    return bad
