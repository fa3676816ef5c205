"""Who may use the app and which files it may read.

* A server reachable from other machines asks for the access token the user set (``tsm ui``
  refuses a non-loopback address without one) before any page is drawn; the token is compared
  in constant time, and a wrong one costs a second.
* Paths typed into the page are confined to the runs folder, the session upload area and the
  roots the user allowed on the command line (``tsm ui --allow-root DIR``), symbolic links
  resolved first.
"""
from __future__ import annotations

import hmac
import ipaddress
import time
from pathlib import Path
from typing import Iterable

import streamlit as st

AUTH_KEY = "_access_granted"
WRONG_TOKEN_DELAY_S = 1.0
LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost")


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


def token_matches(given: str, expected: str) -> bool:
    """Constant-time comparison of two tokens (as UTF-8 bytes)."""
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def gate(token: str | None) -> bool:
    """True when the session may see the app: no token is set, or the session gave it. Else
    draws the token form (and nothing else) and returns False."""
    if token is None or st.session_state.get(AUTH_KEY):
        return True
    st.title("TSM vs TSN")
    with st.form("access"):
        given = st.text_input("Access token", type="password", key="_access_token",
                              help="the token set when the server was started")
        sent = st.form_submit_button("Open")
    if sent:
        if token_matches(given, token):
            st.session_state[AUTH_KEY] = True
            st.session_state.pop("_access_token", None)
            st.rerun()
        time.sleep(WRONG_TOKEN_DELAY_S)
        st.error("Wrong access token.")
    return False


def confine(typed: str, roots: Iterable[Path]) -> Path:
    """The file or folder ``typed`` names (``~`` expanded, links resolved), when it lies in one
    of ``roots``; :class:`PathRefused` naming it otherwise."""
    path = Path(typed.strip()).expanduser().resolve()
    allowed = [Path(r).expanduser().resolve() for r in roots]
    if any(path == r or path.is_relative_to(r) for r in allowed):
        return path
    raise PathRefused(f"{typed.strip()}: outside the folders this app may read (the runs "
                      "folder, uploads, and folders allowed with `tsm ui --allow-root DIR`)")


def readable_roots(settings) -> list[Path]:
    """The folders typed paths may name: the runs folder, the upload area, the allowed roots."""
    from .session import upload_area

    return [Path(settings.runs_dir), upload_area(settings.idle_minutes), *settings.allow_roots]
