"""Progress bars: one kind for every command, drawn on stderr and only on a terminal.

A command's ``--progress`` / ``--no-progress`` (on by default) arrives here as ``enabled``; a bar
is drawn when it is enabled *and* stderr is a terminal, so redirected output, pipes and the
demo's step logs hold no carriage-return updates. A bar that is not drawn still passes its
items through and accepts ``update``, ``set_postfix`` and ``close`` (they do nothing).
"""

from __future__ import annotations

import sys
from typing import Iterable, Optional

from tqdm import tqdm

__all__ = ["progress_bar", "shown"]


def shown(enabled: bool) -> bool:
    """Whether a bar is drawn: ``enabled`` (the command's ``--progress``) and stderr a terminal."""
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(enabled) and callable(isatty) and bool(isatty())


def progress_bar(
    items: Optional[Iterable] = None,
    *,
    desc: str,
    total: Optional[int] = None,
    unit: str = "it",
    enabled: bool = True,
) -> tqdm:
    """A bar over ``items`` (iterate it), or, without items, one of ``total`` steps advanced by
    ``update(n)`` (e.g. as pool results arrive); ``desc`` names the work, ``unit`` one step.
    Use it as a context manager or ``close()`` it; it leaves no line behind when done."""
    return tqdm(
        items,
        desc=desc,
        total=total,
        unit=unit,
        leave=False,
        dynamic_ncols=True,
        file=sys.stderr,
        disable=not shown(enabled),
    )
