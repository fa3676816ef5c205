"""The project's console log: one set-up, made by the ``tsm`` command around a sub-command.

Library code logs with ``logging.getLogger(__name__)`` and does not print; what a command
reports as its result (tables, "wrote ..." lines) the command prints to stdout itself.
:func:`setup_logging` sends log records to stderr, one line each, as ``LEVEL logger: message``
(:data:`LOG_FORMAT`): the project's packages from ``level`` (default ``INFO``;
``TSM_LOG_LEVEL=DEBUG``, ``WARNING``, ... in the environment), other libraries from ``WARNING``
(or ``level`` when higher). The project's packages: ``tsm_apps`` and those the caller names
(``tsm`` names the package of every installed command). Calling it again replaces its handler.
:func:`console_log` is the same for a block, after which the loggers are as they were (``tsm``
runs each command inside one, so a command called in-process leaves no handler behind).
"""

from __future__ import annotations

import logging
import os
import sys
from contextlib import contextmanager
from typing import Iterable, Iterator, Optional, Union

__all__ = [
    "DEFAULT_LEVEL",
    "LEVEL_ENV",
    "LOG_FORMAT",
    "StderrHandler",
    "console_log",
    "log_level",
    "setup_logging",
]

LEVEL_ENV = "TSM_LOG_LEVEL"
DEFAULT_LEVEL = "INFO"
LOG_FORMAT = "%(levelname)s %(name)s: %(message)s"
OWN = __name__.partition(".")[0]  # tsm_apps
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


class StderrHandler(logging.StreamHandler):
    """Writes to the ``sys.stderr`` of the moment (a redirected or captured stream is
    followed, a closed one never kept)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


def log_level(level: Optional[Union[str, int]] = None) -> int:
    """``level`` (a name such as ``"debug"``, or a number), else ``$TSM_LOG_LEVEL``, else
    ``INFO``, as a number; ValueError naming the accepted names."""
    if isinstance(level, int):
        return level
    given = level if level is not None else os.environ.get(LEVEL_ENV) or DEFAULT_LEVEL
    name = str(given).strip().upper()
    if name not in LEVELS:
        source = f"{LEVEL_ENV}={given!r}" if level is None else f"log level {given!r}"
        raise ValueError(f"{source}: expected one of {', '.join(LEVELS)} (any case)")
    return logging.getLevelName(name)


def setup_logging(level: Optional[Union[str, int]] = None, packages: Iterable[str] = ()) -> int:
    """Log the records of ``tsm_apps`` and ``packages`` from ``level`` (see :func:`log_level`)
    and other libraries' from ``WARNING`` to stderr in :data:`LOG_FORMAT`; returns the level
    as a number."""
    number = log_level(level)
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, StderrHandler)]:
        root.removeHandler(old)
    handler = StderrHandler()
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    root.addHandler(handler)
    root.setLevel(max(number, logging.WARNING))
    for name in {OWN, *packages}:
        logging.getLogger(name).setLevel(number)
    return number


@contextmanager
def console_log(
    level: Optional[Union[str, int]] = None, packages: Iterable[str] = ()
) -> Iterator[int]:
    """:func:`setup_logging` inside the block (yields the level); afterwards the root's
    handlers and the levels of the root and the packages' loggers are restored."""
    packages = sorted({OWN, *packages})
    root = logging.getLogger()
    loggers = [root, *(logging.getLogger(name) for name in packages)]
    levels = [lg.level for lg in loggers]
    before = [h for h in root.handlers if isinstance(h, StderrHandler)]
    number = setup_logging(level, packages)
    try:
        yield number
    finally:
        for h in [h for h in root.handlers if isinstance(h, StderrHandler)]:
            root.removeHandler(h)
        for h in before:
            root.addHandler(h)
        for lg, lv in zip(loggers, levels):
            lg.setLevel(lv)
