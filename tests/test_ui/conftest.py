"""Fixtures of the UI tests: runs folders built in tmp_path and an AppTest factory."""

from __future__ import annotations

from pathlib import Path

import pytest

import ui
from ui.app.settings import ENV_ALLOW_ROOTS, ENV_MAX_FRAMES, ENV_MAX_UPLOAD_MB, ENV_RUNS, ENV_TOKEN

APP = Path(ui.__file__).parent / "app" / "main.py"
TIMEOUT = 120


@pytest.fixture
def app_for(monkeypatch):
    """``app_for(runs_dir, max_upload_mb, max_frames, **env)``: an AppTest of ``ui/app/main.py``
    (not yet run), with the settings' environment variables set."""
    from streamlit.testing.v1 import AppTest

    def make(runs: Path, max_upload_mb: int = 50, max_frames: int = 300, **env: str) -> AppTest:
        for name in (ENV_TOKEN, ENV_ALLOW_ROOTS):  # none from the calling environment
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv(ENV_RUNS, str(runs))
        monkeypatch.setenv(ENV_MAX_UPLOAD_MB, str(max_upload_mb))
        monkeypatch.setenv(ENV_MAX_FRAMES, str(max_frames))
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        return AppTest.from_file(str(APP), default_timeout=TIMEOUT)

    return make


@pytest.fixture
def empty_runs(tmp_path) -> Path:
    runs = tmp_path / "runs"
    runs.mkdir()
    return runs
