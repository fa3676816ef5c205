"""The README's and docs/'s relative Markdown links lead somewhere: each linked file exists and
each ``#anchor`` names a heading of the linked page (GitHub's heading slugs), so moving a figure
between docs/results.md and docs/history/ cannot leave a dead link behind."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.M)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """The anchors of a page's headings, repeated slugs numbered as GitHub numbers them."""
    seen: dict[str, int] = {}
    out = set()
    for heading in HEADING.findall(FENCE.sub("", text)):
        s = slug(heading)
        out.add(f"{s}-{seen[s]}" if s in seen else s)
        seen[s] = seen.get(s, 0) + 1
    return out


def broken_links(page: Path) -> list[str]:
    """The relative links of ``page`` whose file or anchor does not exist."""
    bad = []
    for target in LINK.findall(FENCE.sub("", page.read_text())):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, frag = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            bad.append(target)
        elif frag and dest.suffix == ".md" and frag not in anchors(dest.read_text()):
            bad.append(target)
    return bad


def test_slugs_follow_github():
    text = "# 1. Demo headline (`make demo`)\n## 6.7 Engines: ONNX\n## Notes\n## Notes\n"
    assert anchors(text) == {"1-demo-headline-make-demo", "67-engines-onnx", "notes", "notes-1"}


def test_a_dead_link_is_found(tmp_path):
    (tmp_path / "a.md").write_text("# Title\n")
    page = tmp_path / "b.md"
    page.write_text("[ok](a.md#title) [no](a.md#other) [gone](c.md) [web](https://x.org/y)\n")
    assert broken_links(page) == ["a.md#other", "c.md"]


def test_every_docs_link_resolves():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    bad = {str(p.relative_to(ROOT)): broken_links(p) for p in pages}
    assert {page: links for page, links in bad.items() if links} == {}
