"""Check every ``file:line`` citation of the recipe tables against checkouts of the references.

    python -m tools.check_citations --repo TSM=/path/temporal-shift-module \\
        --repo FGFA=/path/Flow-Guided-Feature-Aggregation --repo DFF=/path/Deep-Feature-Flow \\
        --repo SF=/path/SlowFast [--doc docs/recipes.md]

The citations of ``docs/recipes.md`` (``[REPO] FILE:LINES [STATEMENT]``) are read by
:func:`tools.citations.all_citations`, whose module says their form and the words each names.
A table citation states what its lines read: ``[KEY = EXPR]`` holds when the lines hold the
first literal of ``EXPR`` (a number as any equal literal, a bool as ``True``/``true``, ``None``
as ``None``/``null``, a string verbatim, a tuple item by item), as the first literals after
``KEY`` when a key is given, and ``EXPR`` after its conversion equals the row's value
(``reference`` for the source column, ``ours`` for the reason column); ``[prose: KEY = EXPR]``
the same without the comparison; ``[prose]`` when the lines hold every backticked quote of the
citation (else one word it names). A table citation without a statement fails. A citation in a
paragraph holds when its lines exist and hold one word it names (or it names none).
Papers (``15min``, ``AAVG``, ``TSM supplementary §1``) are cited by section and are not checked.
Prints one line per citation that fails and a summary naming each repository's commit (from its
``.git`` when it has one); exits 1 when any fails, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from tools.citations import Citation, all_citations
from tools.recipe_table import same

ROOT = Path(__file__).resolve().parents[1]
NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])")


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


def _after_key(text: str, key: str) -> Optional[str]:
    """``text`` after the first occurrence of ``key`` (all of it without a key); None when
    ``key`` is not there."""
    if not key:
        return text
    at = text.find(key)
    return None if at < 0 else text[at + len(key) :]


LITERAL = re.compile(rf"{NUMBER.pattern}|\b(?:true|false|none|null)\b", re.IGNORECASE)
WORD_VALUE = {"true": True, "false": False, "none": None, "null": None}


def _literal_tokens(text: str) -> List[object]:
    """The number, bool and None literals of ``text`` in order."""
    out: List[object] = []
    for tok in LITERAL.findall(text):
        out.append(WORD_VALUE[tok.lower()] if tok.lower() in WORD_VALUE else float(tok))
    return out


def _bound(text: str, read: object) -> bool:
    """Whether the first literals of ``text`` (after a key) are ``read`` (a string: anywhere)."""
    if isinstance(read, str):
        return holds_value(text, read)
    want = read if isinstance(read, tuple) else (read,)
    got = _literal_tokens(text)[: len(want)]
    return len(got) == len(want) and all(same(g, w) for g, w in zip(got, want))


def reads(text: str, key: str, read: object) -> bool:
    """Whether ``text`` holds ``read``: anywhere without a key, else as the first literals
    after ``key``."""
    rest = _after_key(text, key)
    if rest is None:
        return False
    return _bound(rest, read) if key else holds_value(text, read)


def _quotes_hold(c: Citation, text: str) -> bool:
    """Every backticked quote of ``c`` in ``text``, else one word it names (or it names none)."""
    low = text.lower()
    if c.quotes:
        return all(_squash(q).lower() in low for q in c.quotes)
    return not c.words or any(_squash(w).lower() in low for w in c.words)


def _statement_fails(c: Citation, text: str) -> Optional[str]:
    st = c.statement
    if st is None:
        return "states no value: write [KEY = VALUE] (or [prose] for lines that read none)"
    if st.reads and not reads(text, st.key, st.read):
        where = f"after {st.key!r}" if st.key else "anywhere"
        return f"do not hold {st.read!r} {where}: {text[:160]!r}"
    if not st.prose and not same(st.value, c.value):
        return f"state {st.read!r}, which converts to {st.value!r}, not the row's {c.value!r}"
    if not st.reads and not _quotes_hold(c, text):
        wanted = ", ".join(repr(w) for w in (c.quotes or c.words))
        return f"do not hold {wanted}: {text[:160]!r}"
    return None


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
    span = f"lines {c.lines[0]}..{c.lines[-1]} of {repo} {c.path}"
    if c.prose:  # a paragraph's: one word it names
        if not c.words or any(_squash(w).lower() in text.lower() for w in c.words):
            return None
        return f"{span} hold none of {', '.join(repr(w) for w in c.words)}: {text[:160]!r}"
    why = _statement_fails(c, text)
    return None if why is None else f"{span} {why}"


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
