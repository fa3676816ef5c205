"""The app's pages, one module each (Detection, Attention, Live, Runs): each draws its page
from the widgets (:mod:`ui.app.widgets`) and the records of :mod:`ui.app.sources`; a page never
imports another page.

Pages of other packages: a function ``render(settings: UISettings) -> None`` registered under
the entry-point group ``tsm.views`` (:data:`GROUP`; the entry's name is the page's name in the
sidebar) appears after the app's own pages (docs/guide/extending.md).
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points
from typing import Collection

GROUP = "tsm.views"
"""Entry-point group of pages from other packages: ``"Name" = "package.module:render"``."""


def installed_views(taken: Collection[str]) -> dict[str, EntryPoint]:
    """The pages other installed packages register under :data:`GROUP`, by name, in name order;
    names in ``taken`` (the app's own pages) cannot be taken."""
    found = {ep.name: ep for ep in entry_points(group=GROUP) if ep.name not in taken}
    return dict(sorted(found.items()))
