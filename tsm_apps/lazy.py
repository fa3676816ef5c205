"""Names a package exports but loads on first use (PEP 562), so importing the package (or one
light module of it) does not import torchvision's model zoo or the training code."""

from __future__ import annotations

import importlib
import sys
from typing import Any, Callable


def lazy_exports(package: str, api: dict) -> tuple[list, Callable[[str], Any], Callable[[], list]]:
    """``(__all__, __getattr__, __dir__)`` for ``package`` (its ``__name__``).

    ``api`` maps a relative module name to the names it provides, e.g.
    ``{".online": ("OnlineRecognizer",)}``. The first lookup of a name imports its module and
    stores the value in the package, so later lookups do not come back here.
    """
    where = {name: module for module, names in api.items() for name in names}

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where[name], package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list:
        return sorted(set(vars(sys.modules[package])) | set(where))

    return sorted(where), __getattr__, __dir__
