"""UI settings: every default of the app defined once, overridable through environment variables.

``tsm ui`` passes its options to the Streamlit process through these variables (Streamlit owns
the process's argv), and tests set them with ``monkeypatch.setenv``.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..pipeline.layout import DEFAULT_ROOT

ENV_RUNS = "TSM_UI_RUNS"
ENV_MAX_UPLOAD_MB = "TSM_UI_MAX_UPLOAD_MB"
ENV_MAX_FRAMES = "TSM_UI_MAX_FRAMES"

DEFAULT_MAX_UPLOAD_MB = 50.0
DEFAULT_MAX_FRAMES = 300
"""A 10-s clip at 25-30 fps is taken whole; views say when the limit cuts a video."""
DEFAULT_PORT = 8501
DEFAULT_HOST = "127.0.0.1"
DEMO_HINT = ("No trained models or results were found under `{runs}`. Run `make demo` (or "
             "`tsm demo`) from the repository root to generate the synthetic data, train the TSN "
             "and TSM models and write their results there; then reload this page.")


def default_runs_dir(cwd: Path | None = None) -> Path:
    """The demo's runs folder (``runs/demo``) when it exists, else its parent ``runs``
    (relative to ``cwd``)."""
    demo = Path(cwd or Path.cwd()) / DEFAULT_ROOT
    return demo if demo.is_dir() else demo.parent


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw in (None, ""):
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number, got {raw!r}") from None
    if value <= 0:
        raise ValueError(f"{name} must be > 0, got {raw!r}")
    return value


@dataclass(frozen=True)
class UISettings:
    """What the app reads at start: the runs folder and the limits on user input."""
    runs_dir: Path
    max_upload_mb: float = DEFAULT_MAX_UPLOAD_MB
    max_frames: int = DEFAULT_MAX_FRAMES

    @property
    def max_upload_bytes(self) -> int:
        return int(self.max_upload_mb * 1024 * 1024)

    @classmethod
    def from_env(cls) -> "UISettings":
        runs = os.environ.get(ENV_RUNS)
        return cls(runs_dir=Path(runs) if runs else default_runs_dir(),
                   max_upload_mb=_env_float(ENV_MAX_UPLOAD_MB, DEFAULT_MAX_UPLOAD_MB),
                   max_frames=int(_env_float(ENV_MAX_FRAMES, DEFAULT_MAX_FRAMES)))
