"""Who may use the app and which files it may read.

* A server reachable from other machines needs the access token the user set (``tsm ui``
  refuses a non-loopback address without one). The server's gate (:mod:`ui.gate`) answers
  every route with a sign-in page until the browser holds a signed credential; :func:`gate`
  checks that credential again before the page draws anything.
* Paths typed into the page are confined to the runs folder, the session's OWN uploads and the
  roots the user allowed on the command line (``tsm ui --allow-root DIR``), symbolic links
  resolved first; a relative path is read in the runs folder (:func:`read_typed`). Another
  session's uploads are never readable.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Iterable

import streamlit as st

from ..gate import COOKIE, CREDENTIALS

LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost")
NOT_SIGNED_IN = (
    "This browser is not signed in to this server: open the app's address again "
    "to see its sign-in page."
)
# ids of the sessions that drew the app in this process (ui.server closes those that end)
DRAWN_SESSIONS: set[str] = set()


class PathRefused(ValueError):
    """A typed path outside the folders the app may read; the message is one line."""


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server on this machine (127.0.0.0/8, ::1,
    ``localhost``); any other name or address reaches other machines."""
    host = host.strip().strip("[]")
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def gate(token: str | None) -> bool:
    """True when the session may see the app: no token is set, or the browser sent a valid
    credential of this server (:mod:`ui.gate`; the websocket's cookies). Else draws one line
    saying so, and nothing else, and returns False."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is not None:
        DRAWN_SESSIONS.add(ctx.session_id)
    if token is None or CREDENTIALS.valid(st.context.cookies.get(COOKIE)):
        return True
    st.title("TSM vs TSN")
    st.warning(NOT_SIGNED_IN)
    return False


def confine(typed: str, roots: Iterable[Path]) -> Path:
    """The file or folder ``typed`` names (``~`` expanded, links resolved), when it lies in one
    of ``roots``; :class:`PathRefused` naming it otherwise."""
    path = Path(typed.strip()).expanduser().resolve()
    allowed = [Path(r).expanduser().resolve() for r in roots]
    if any(path == r or path.is_relative_to(r) for r in allowed):
        return path
    raise PathRefused(
        f"{typed.strip()}: outside the folders this app may read (the runs "
        "folder, this session's uploads, and folders allowed with `tsm ui --allow-root DIR`)"
    )


def readable_roots(settings) -> list[Path]:
    """The folders typed paths may name: the runs folder, this session's own upload folder
    (never the whole upload area: another session's uploads stay its own), the allowed roots."""
    from .session import own_folder

    own = own_folder()
    return [Path(settings.runs_dir), *([own] if own else []), *settings.allow_roots]


def in_runs(typed: str, runs_dir: Path) -> str:
    """A typed path as the app reads it: an absolute (or ``~``) path as it is, a relative one
    in the runs folder (the lists show paths relative to it)."""
    typed = typed.strip()
    path = Path(typed).expanduser()
    return typed if path.is_absolute() else str(Path(runs_dir) / path)


def read_typed(typed: str, settings) -> Path:
    """The file or folder a typed path names (relative: in the runs folder), confined to
    :func:`readable_roots`; :class:`PathRefused` naming the path as typed otherwise."""
    read = in_runs(typed, settings.runs_dir)
    try:
        return confine(read, readable_roots(settings))
    except PathRefused as e:
        raise PathRefused(str(e).replace(read, typed.strip(), 1)) from None
