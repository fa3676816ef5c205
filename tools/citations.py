"""The ``file:line`` citations of the recipe document (``docs/recipes.md``), read from its tables
(by :func:`tools.recipe_table.read_table`) and the paragraphs around them.

The tables cite their sources in the ``source`` and ``why ours differs`` columns, e.g.
``yaml:101 RPN_POSITIVE_OVERLAP``, ``DFF sym:440, 453, 466 (res5 3x3 dilate 2)``,
``FGFA lib/rpn/rpn.py:232-240``, ``SF defaults:737 RANDOM_FLIP`` or ``(sh:5)``. A citation is
``[REPO] FILE:LINES`` with

* ``REPO`` a repository key (``TSM``, ``FGFA``, ``DFF``, ``SF``); without one, the repository
  of the cell's previous citation, else the section's (:data:`SECTION_REPO`);
* ``FILE`` a path in that repository, a file name found once in it (``image.py``), or a short
  name of the section (:data:`SHORT_NAMES`: ``yaml``, ``sym``, ``sh``, ``test sh``,
  ``defaults``);
* ``LINES`` ``N``, ``N-M`` or a comma list of them;
* in a table, then a statement in brackets of what the lines read (:func:`parse_statement`):
  ``[KEY = EXPR]`` (``yaml:101 [RPN_POSITIVE_OVERLAP = 0.7]``, ``sh:4-5 [--lr = 0.02 x 8 /
  128]``): the lines hold the first literal of ``EXPR`` (the first literals after ``KEY`` when
  a key is given), and ``EXPR`` (``x``, ``/``, ``+``, ``-``; ``N%`` is N / 100) is the row's
  value; ``[prose]``: the lines read no value of the row (code, a sentence), its quotes must
  be there; ``[prose: KEY = EXPR]``: the lines hold the literal, which is not the row's value.

Each citation carries the words it names (a backticked snippet, an ``UPPER_CASE``,
``snake_case`` or ``--flag`` word of the text after it, else of the text before it in the cell),
its statement and the row's value; ``tools/check_citations.py`` checks them against the
references.
"""

from __future__ import annotations

import ast
import operator
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

from tools.recipe_table import read_table  # the one reader of the tables

DETECTION, PRESET = "detection", "preset"
# the repository a section's unqualified citations name, and its short file names
SECTION_REPO = {DETECTION: "FGFA", PRESET: "TSM"}
SHORT_NAMES: Dict[str, Dict[str, Tuple[str, str]]] = {
    DETECTION: {
        "yaml": (
            "FGFA",
            "experiments/fgfa_rfcn/cfgs/resnet_v1_101_flownet_imagenet_vid_rfcn_end2end_ohem.yaml",
        ),
        "DFF sym": ("DFF", "rfcn/symbols/resnet_v1_101_rfcn.py"),
        "sym": ("DFF", "rfcn/symbols/resnet_v1_101_rfcn.py"),
    },
    PRESET: {
        "sh": ("TSM", "scripts/train_tsm_kinetics_rgb_8f.sh"),
        "test sh": ("TSM", "scripts/test_tsm_kinetics_rgb_8f.sh"),
        "yaml": ("SF", "configs/Kinetics/SLOWFAST_8x8_R50_stepwise_multigrid.yaml"),
        "SF defaults": ("SF", "slowfast/config/defaults.py"),
        "defaults": ("SF", "slowfast/config/defaults.py"),
    },
}
LINES = r"\d+(?:-\d+)?(?:,\s*\d+(?:-\d+)?)*"
CITATION = re.compile(
    r"(?:\b(?P<repo>[A-Z][A-Za-z]*)\s+)?(?P<file>(?:test )?[\w./-]+)"
    rf":(?P<lines>{LINES})(?:\s*\[(?P<statement>[^\]]*)\])?"
)
WORD = re.compile(
    r"`([^`]+)`|(--[\w-]+)|\b([A-Z][A-Z0-9]*_[A-Z0-9_]+|[A-Z]{3,}[A-Z0-9]*"
    r"|[a-z][a-z0-9]*_[a-z0-9_]+)\b"
)


OPS = {ast.Mult: operator.mul, ast.Div: operator.truediv, ast.Add: operator.add}
OPS[ast.Sub] = operator.sub


@dataclass(frozen=True)
class Statement:
    """What a table citation says its lines read: ``read`` (a literal, or a tuple of them)
    after ``key`` (anywhere when empty), converted to ``value``; ``prose``: not the row's value."""

    key: str = ""
    read: Any = None
    value: Any = None
    prose: bool = True
    reads: bool = False  # whether a literal is stated at all


def _evaluate(node: ast.AST, where: str) -> Tuple[Any, Any]:
    """``(first literal, value)`` of a statement's expression."""
    if isinstance(node, ast.Constant):
        return node.value, node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        first, value = _evaluate(node.operand, where)
        return -first, -value
    if isinstance(node, ast.Tuple):
        items = [_evaluate(e, where)[1] for e in node.elts]
        return tuple(items), tuple(items)
    if isinstance(node, ast.BinOp) and type(node.op) in OPS:
        first, left = _evaluate(node.left, where)
        return first, OPS[type(node.op)](left, _evaluate(node.right, where)[1])
    raise ValueError(f"{where}: {ast.unparse(node)!r} is not a literal or x / + - of literals")


def parse_statement(text: str, where: str) -> Statement:
    """``[KEY = EXPR]``, ``[prose]`` or ``[prose: KEY = EXPR]`` (the module docstring);
    ValueError naming ``where`` for any other form."""
    body = text.strip()
    prose = body.startswith("prose")
    body = body[len("prose") :].lstrip(":").strip() if prose else body
    if not body:
        if not prose:
            raise ValueError(f"{where}: an empty statement [] (write [KEY = VALUE] or [prose])")
        return Statement()
    key, eq, expr = body.partition("=")
    if not eq or not expr.strip():
        raise ValueError(f"{where}: statement [{text}] is not [KEY = VALUE] or [prose]")
    expr = re.sub(r"(\d+(?:\.\d*)?)%", r"(\1 / 100)", expr.replace(" x ", " * ").strip())
    try:
        node = ast.parse(expr, mode="eval").body
    except SyntaxError:
        raise ValueError(f"{where}: statement [{text}]: {expr!r} is not an expression") from None
    read, value = _evaluate(node, where)
    return Statement(key.strip(), read, value, prose, True)


@dataclass(frozen=True)
class Citation:
    line: int  # line of the doc
    text: str  # as written
    repo: str
    path: str
    lines: Tuple[int, ...]
    words: Tuple[str, ...]
    value: object
    prose: bool = False  # in a paragraph: no value; the lines must exist (and hold its words)
    statement: Optional[Statement] = None  # a table citation's; None when it states nothing
    quotes: Tuple[str, ...] = ()  # the backticked snippets among ``words``


def section_kind(recipe: str) -> str:
    return DETECTION if recipe.startswith("detection/") else PRESET


def parse_lines(text: str) -> Tuple[int, ...]:
    out: List[int] = []
    for part in text.split(","):
        a, _, b = part.strip().partition("-")
        out += range(int(a), int(b or a) + 1)
    return tuple(out)


def words_of(text: str) -> List[str]:
    return [next(g for g in m.groups() if g) for m in WORD.finditer(text)]


def _clause(before: str, after: str, cut: str) -> Tuple[str, str]:
    """The text after a citation up to the first of ``cut``, and before it from the last."""
    for c in cut:
        after = after.split(c)[0]
        before = before.split(c)[-1]
    return before, after


def citations(
    cell: str,
    kind: str,
    line: int,
    value: object,
    repos: Dict[str, Path],
    cut: str = ";",
    prose: bool = False,
    doc: str = "recipes.md",
) -> Iterator[Citation]:
    """The citations of one table cell or paragraph (see the module docstring); the words a
    citation names end at the characters ``cut``."""
    repo = SECTION_REPO[kind]
    found = list(CITATION.finditer(cell))
    found = [
        m
        for m in found
        if "." in m["file"]
        or m["file"] in SHORT_NAMES[kind]
        or f"{m['repo']} {m['file']}" in SHORT_NAMES[kind]
    ]
    for i, m in enumerate(found):
        name, prefix = m["file"], m["repo"]
        end = found[i + 1].start() if i + 1 < len(found) else len(cell)
        before, after = _clause(cell[: m.start()], cell[m.end() : end], cut)
        short = SHORT_NAMES[kind]
        key = f"{prefix} {name}" if prefix and f"{prefix} {name}" in short else name
        if key in short:
            repo, path = short[key]
        else:
            if prefix in repos or prefix in SECTION_REPO.values():
                repo = prefix
            path = name
        words = words_of(after) or words_of(before)
        quotes = re.findall(r"`([^`]+)`", after if words_of(after) else before)
        stated = m["statement"]
        statement = None if stated is None else parse_statement(stated, f"{doc}:{line}: {m[0]}")
        yield Citation(
            line,
            m.group(0).strip(),
            repo,
            path,
            parse_lines(m["lines"]),
            tuple(words),
            value,
            prose,
            statement,
            tuple(quotes),
        )


def prose(doc: Path) -> Iterator[Tuple[str, int, str]]:
    """``(section kind, first line, text)`` of each paragraph outside the tables."""
    kind, start, lines = PRESET, 0, []
    numbered = list(enumerate(doc.read_text().splitlines(), start=1)) + [(0, "")]
    for n, line in numbered:
        if line.strip() and not line.startswith(("|", "#")):
            start, lines = (start or n), lines + [line.strip()]
            continue
        if lines:
            yield kind, start, " ".join(lines)
        start, lines = 0, []
        if line.startswith("## "):
            kind = (
                section_kind(line[3:].strip())
                if line[3:].strip() != "Recognition presets"
                else PRESET
            )


def all_citations(doc: Path, repos: Dict[str, Path]) -> List[Citation]:
    """Every citation of ``doc``: the tables' source and reason columns (with the row's
    reference and ours values), then the paragraphs around them (no value)."""
    out: List[Citation] = []
    for recipe, rows in read_table(doc).items():
        kind = section_kind(recipe)
        for r in rows:
            out += citations(r.source, kind, r.line, r.reference, repos, doc=doc.name)
            out += citations(r.reason, kind, r.line, r.ours, repos, doc=doc.name)
    for kind, line, text in prose(doc):
        out += citations(text, kind, line, None, repos, cut=";()", prose=True, doc=doc.name)
    return out
