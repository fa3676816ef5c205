"""Text the user gave (an upload's name, a typed path) on a page that renders Markdown: shown
literally, as inline code, so no name becomes a link, an image or formatting."""

from __future__ import annotations

import re

__all__ = ["literal"]


def literal(text: str) -> str:
    """``text`` as a Markdown code span: rendered as the characters it holds (``[a](http://x)``
    stays text, not a link). Line breaks become spaces; the fence is one backtick longer than
    the longest run of backticks in ``text``."""
    text = " ".join(str(text).splitlines())
    fence = "`" * (max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"
