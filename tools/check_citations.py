"""Check every ``file:line`` citation of the recipe tables against checkouts of the references.

    python -m tools.check_citations --repo TSM=/path/temporal-shift-module \\
        --repo FGFA=/path/Flow-Guided-Feature-Aggregation --repo DFF=/path/Deep-Feature-Flow \\
        --repo SF=/path/SlowFast [--doc docs/recipes.md]

The tables of ``docs/recipes.md`` (read by :func:`tools.recipe_table.read_table`) cite their
sources in the ``source`` and ``why ours differs`` columns, e.g. ``yaml:101 RPN_POSITIVE_OVERLAP``,
``DFF sym:440, 453, 466 (res5 3x3 dilate 2)``, ``FGFA lib/rpn/rpn.py:232-240``,
``SF defaults:737 RANDOM_FLIP`` or ``(sh:5)``. A citation is ``[REPO] FILE:LINES`` with

* ``REPO`` a key given with ``--repo`` (``TSM``, ``FGFA``, ``DFF``, ``SF``); without one, the
  repository of the cell's previous citation, else the section's (:data:`SECTION_REPO`);
* ``FILE`` a path in that repository, a file name found once in it (``image.py``), or a short
  name of the section (:data:`SHORT_NAMES`: ``yaml``, ``sym``, ``sh``, ``test sh``,
  ``defaults``);
* ``LINES`` ``N``, ``N-M`` or a comma list of them.

A citation holds when its file has those lines and they hold the value: one of the words the
citation names (a backticked snippet, an ``UPPER_CASE``, ``snake_case`` or ``--flag`` word of
the text after it, else of the text before it in the cell), or the row's value (``reference``
for the source column, ``ours`` for the reason column; a number matches any literal equal to
it, a list when every item matches). Papers (``15min``, ``AAVG``, ``TSM supplementary §1``) are
cited by section and are not checked. Prints one line per citation that fails and a summary
naming each repository's commit (from its ``.git`` when it has one); exits 1 when any fails,
2 on bad arguments.
"""

from __future__ import annotations

import argparse
import math
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

from tools.recipe_table import read_table  # the one reader of the tables

ROOT = Path(__file__).resolve().parents[1]

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
    rf":(?P<lines>{LINES})"
)
WORD = re.compile(
    r"`([^`]+)`|(--[\w-]+)|\b([A-Z][A-Z0-9]*_[A-Z0-9_]+|[A-Z]{3,}[A-Z0-9]*"
    r"|[a-z][a-z0-9]*_[a-z0-9_]+)\b"
)
NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])")


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
        yield Citation(
            line,
            m.group(0).strip(),
            repo,
            path,
            parse_lines(m["lines"]),
            tuple(words),
            value,
            prose,
        )


def _find(root: Path, path: str) -> Optional[Path]:
    """``path`` in ``root``, or the one file of that name when ``path`` has no folder."""
    if (root / path).is_file():
        return root / path
    if "/" not in path:
        hits = [p for p in root.rglob(path) if p.is_file() and ".git" not in p.parts]
        if len(hits) == 1:
            return hits[0]
    return None


def resolve(c: Citation, repos: Dict[str, Path]) -> Tuple[Optional[str], Optional[Path]]:
    """``(repository, file)`` of ``c``: in its repository, else in the one other repository
    that has it (a paragraph naming another repository's file)."""
    if c.repo in repos and (f := _find(repos[c.repo], c.path)):
        return c.repo, f
    hits = [(k, f) for k, root in repos.items() if k != c.repo and (f := _find(root, c.path))]
    return hits[0] if len(hits) == 1 else (None, None)


def _numbers(text: str) -> List[float]:
    out = []
    for tok in NUMBER.findall(text):
        try:
            out.append(float(tok))
        except ValueError:
            pass
    return out


def holds_value(text: str, value: object) -> bool:
    """Whether ``text`` holds ``value``: a number as any equal literal, a bool as
    ``True``/``true``, a string verbatim, a list or tuple item by item."""
    if isinstance(value, bool):
        return re.search(rf"\b{value}\b", text, re.IGNORECASE) is not None
    if isinstance(value, (int, float)):
        return any(math.isclose(n, value, rel_tol=1e-9) for n in _numbers(text))
    if isinstance(value, str):
        return bool(value) and value.lower() in text.lower()
    if isinstance(value, (list, tuple)) and value:
        return all(holds_value(text, v) for v in value)
    return False


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def check(c: Citation, repos: Dict[str, Path]) -> Optional[str]:
    """``None`` when ``c`` holds, else why not."""
    repo, f = resolve(c, repos)
    if f is None:
        where = c.repo if c.repo in repos else f"{c.repo} (no --repo {c.repo}=FOLDER given)"
        return f"{c.path} is not a file of {where} (or its name is not unique there)"
    lines = f.read_text(errors="replace").splitlines()
    if max(c.lines) > len(lines):
        return f"{repo} {c.path} has {len(lines)} lines, line {max(c.lines)} cited"
    text = _squash("\n".join(lines[n - 1] for n in c.lines))
    if c.prose and not c.words:
        return None
    if any(_squash(w).lower() in text.lower() for w in c.words) or holds_value(text, c.value):
        return None
    wanted = ", ".join(repr(w) for w in c.words) or "(no word)"
    return (
        f"lines {c.lines[0]}..{c.lines[-1]} of {repo} {c.path} hold none of {wanted} "
        f"nor the value {c.value!r}: {text[:160]!r}"
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
            out += citations(r.source, kind, r.line, r.reference, repos)
            out += citations(r.reason, kind, r.line, r.ours, repos)
    for kind, line, text in prose(doc):
        out += citations(text, kind, line, None, repos, cut=";()", prose=True)
    return out


def commit_of(root: Path) -> str:
    r = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--short=7", "HEAD"], capture_output=True, text=True
    )
    return r.stdout.strip() if r.returncode == 0 else "a commit not known here (no git)"


def parse_repos(items: List[str]) -> Dict[str, Path]:
    repos = {}
    for item in items:
        key, sep, path = item.partition("=")
        if not sep or not key or not Path(path).is_dir():
            raise ValueError(f"--repo {item!r}: expected KEY=FOLDER with an existing folder")
        repos[key] = Path(path)
    return repos


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--doc", type=Path, default=ROOT / "docs" / "recipes.md")
    p.add_argument(
        "--repo",
        action="append",
        default=[],
        metavar="KEY=FOLDER",
        help="a checkout of a reference repository (TSM, FGFA, DFF, SF)",
    )
    a = p.parse_args(argv)
    try:
        repos = parse_repos(a.repo)
        cites = all_citations(a.doc, repos)
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    bad = [(c, why) for c in cites if (why := check(c, repos))]
    for c, why in bad:
        print(f"{a.doc.name}:{c.line}: {c.text!r}: {why}")
    used = sorted({k for c in cites if (k := resolve(c, repos)[0])})
    names = ", ".join(f"{k} at {commit_of(repos[k])}" for k in used if k in repos)
    print(f"{len(cites) - len(bad)} of {len(cites)} citations hold ({names})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
