"""The README's and the user's guide's Python blocks run as written (README.md,
docs/guide/*.md): each page's blocks in order, in one namespace per page, in an empty folder, as
a reader would paste them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "guide"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def python_blocks(text: str) -> list[str]:
    """The fenced ``python`` blocks of a Markdown text, in order."""
    return BLOCK.findall(text)


def test_blocks_are_found_in_order():
    text = "x\n```python\na = 1\n```\n```toml\nb = 2\n```\n```python\nc = a\n```\n"
    assert python_blocks(text) == ["a = 1\n", "c = a\n"]


PAGES = sorted(p for p in [ROOT / "README.md", *GUIDE.glob("*.md")] if python_blocks(p.read_text()))


def test_the_guide_has_runnable_pages():
    names = {p.name for p in PAGES}
    assert {"README.md", "extending.md", "getting-started.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_python_block_runs(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": f"guide_{page.stem}"}
    for i, block in enumerate(python_blocks(page.read_text())):
        exec(compile(block, f"{page.name} block {i + 1}", "exec"), namespace)
