"""A detector's mmengine config read as data, never run as a program.

An mmengine config is a Python file, and loading it runs it. The config ``tsm detect train``
leaves in a work folder is the resolved one (``cfg.pretty_text``): only ``name = value`` lines
whose values are constants, tuples, lists, dicts and ``dict(key=value, ...)``. The app reads a
config only when it is such plain data (checked on the parsed text, nothing executed) and hands
mmengine a private copy of exactly the text it checked; anything else — an import, a call, a
``_base_`` file, a custom import other than this project's ``detection`` — is refused with one
line naming the file and the line.
"""

from __future__ import annotations

import os
from pathlib import Path

from tsm_apps.config_text import ConfigRefused, read_config_text

__all__ = ["ConfigRefused", "literal_config", "checked_copy"]

ALLOWED_CUSTOM_IMPORTS = ("detection",)
RESERVED = ("_base_", "dict")


def literal_config(text: str, name: str) -> dict:
    """The variables of config ``text`` (file ``name``, for messages) when it is plain data
    (:func:`tsm_apps.config_text.read_config_text`'s plain grammar)."""
    out = read_config_text(text, name, plain=True, reserved=RESERVED)
    imports = (out.get("custom_imports") or {}).get("imports", [])
    extra = [
        m
        for m in ([imports] if isinstance(imports, str) else imports)
        if str(m).split(".")[0] not in ALLOWED_CUSTOM_IMPORTS
    ]
    if extra:
        raise ConfigRefused(
            f"{name}: custom_imports {extra}: only {list(ALLOWED_CUSTOM_IMPORTS)} may be imported"
        )
    return out


def checked_copy(config: Path, folder: Path) -> Path:
    """``folder/config.py`` holding exactly the text of ``config`` that :func:`literal_config`
    accepted (so what mmengine loads is what was checked)."""
    config = Path(config)
    text = config.read_text(encoding="utf-8")
    literal_config(text, str(config))
    out = Path(folder) / "config.py"
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    return out
