"""``tsm ui`` becomes its server: no second process stays behind holding the command's imports
(torch and the rest, ~700 MB) while it only waits."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.headless import running_app


def _cmdlines() -> dict:
    out = {}
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            out[int(proc.name)] = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, UnicodeDecodeError):
            continue  # gone meanwhile
    return out


@pytest.mark.slow
def test_tsm_ui_is_replaced_by_its_server(empty_runs):
    with running_app(empty_runs) as url:
        port = url.rsplit(":", 1)[1]
        procs = _cmdlines()
        wrapper = [p for p, c in procs.items() if " ui --runs " in c and f"--port {port} " in c]
        server = [
            p for p, c in procs.items() if "streamlit run" in c and f"--server.port {port} " in c
        ]
    assert wrapper == [] and len(server) == 1, (wrapper, server)
