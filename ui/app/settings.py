"""UI settings: every default of the app defined once, overridable through environment variables.

``tsm ui`` passes its options to the Streamlit process through these variables (Streamlit owns
the process's argv), and tests set them with ``monkeypatch.setenv``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ..runs.layout import DEFAULT_ROOT

ENV_RUNS = "TSM_UI_RUNS"
ENV_MAX_UPLOAD_MB = "TSM_UI_MAX_UPLOAD_MB"
ENV_MAX_CHECKPOINT_MB = "TSM_UI_MAX_CHECKPOINT_MB"
ENV_MAX_FRAMES = "TSM_UI_MAX_FRAMES"
ENV_FRAME_SIZE = "TSM_UI_FRAME_SIZE"
ENV_MAX_DECODED_MP = "TSM_UI_MAX_DECODED_MP"
ENV_ALLOW_ROOTS = "TSM_UI_ALLOW_ROOTS"
ENV_TOKEN = "TSM_UI_TOKEN"
ENV_IDLE_MINUTES = "TSM_UI_IDLE_MINUTES"
ENV_STREAM_HOSTS = "TSM_UI_ALLOW_STREAM_HOSTS"
ENV_ICE_SERVERS = "TSM_UI_ICE_SERVERS"
ENV_RECORD_LIVE = "TSM_UI_RECORD_LIVE"
ENV_MAX_RESOLUTION = "TSM_UI_MAX_RESOLUTION"
ENV_MAX_VIDEO_FRAMES = "TSM_UI_MAX_VIDEO_FRAMES"
ENV_MAX_UPLOADS = "TSM_UI_MAX_UPLOADS"
ENV_ORIGINS = "TSM_UI_ALLOWED_ORIGINS"
ENV_SIGN_IN_HOURS = "TSM_UI_SIGN_IN_HOURS"

DEFAULT_MAX_UPLOAD_MB = 50
DEFAULT_MAX_CHECKPOINT_MB = 500  # a ResNet-101 TSM checkpoint is about 170 MB
DEFAULT_MAX_FRAMES = 300
"""Frames decoded for display: a 10-s clip at 25-30 fps is shown whole; views say when the
limit cuts a video (the models sample the whole file)."""
DEFAULT_MAX_RESOLUTION = (3840, 2160)
"""The largest uploaded video (long side x short side, from its header): 4K UHD."""
DEFAULT_MAX_VIDEO_FRAMES = 54_000
"""The longest uploaded video, in frames (from its header): 30 minutes at 30 fps."""
DEFAULT_MAX_UPLOADS = 30
"""Uploads one session may send in an hour (the server refuses more)."""
DEFAULT_FRAME_SIZE = 360
"""Working resolution: frames are decoded with their shorter side at most this many pixels."""
DEFAULT_MAX_DECODED_MP = 70.0
"""Decoded pixels per video, in millions: 300 frames of 640x360 (207 MB of RGB)."""
DEFAULT_IDLE_MINUTES = 30.0
"""A session's temporary folder is removed after this long without use (or when it ends)."""
MIN_TOKEN_LENGTH = 12
DEFAULT_PORT = 8501
DEFAULT_HOST = "127.0.0.1"
DEMO_HINT = (
    "No trained models or results were found under `{runs}`. Run `make demo` (or "
    "`tsm demo`) from the repository root to generate the synthetic data, train the TSN "
    "and TSM models and write their results there; then reload this page."
)


@dataclass(frozen=True)
class DecodeLimits:
    """How much of a video the app decodes: at most ``max_frames`` frames, frames downscaled
    to a shorter side of at most ``short_side`` pixels, and at most ``max_pixels`` decoded
    pixels in all (frames x height x width)."""

    max_frames: int
    short_side: int
    max_pixels: int

    def __post_init__(self) -> None:
        if min(self.max_frames, self.short_side, self.max_pixels) < 1:
            raise ValueError(f"decode limits must be >= 1, got {self}")

    def frames_for(self, width: int, height: int) -> int:
        """Frames of ``width x height`` (working size) the limits admit (at least one)."""
        return max(1, min(self.max_frames, self.max_pixels // (width * height)))


@dataclass(frozen=True)
class VideoLimits:
    """The largest video the app accepts as an upload, checked from its header before any
    frame is decoded: frames of at most ``max_size`` ``(long side, short side)`` pixels, at
    most ``max_frames`` frames."""

    max_size: tuple = DEFAULT_MAX_RESOLUTION
    max_frames: int = DEFAULT_MAX_VIDEO_FRAMES

    def refusal(self, width: int, height: int, frames: int) -> Optional[str]:
        """What exceeds the limits (``'7680x4320 frames; the limit is 3840x2160'``), or None."""
        long, short = max(width, height), min(width, height)
        if long > self.max_size[0] or short > self.max_size[1]:
            return f"{width}x{height} frames; the limit is {self.max_size[0]}x{self.max_size[1]}"
        if frames > self.max_frames:
            return f"{frames} frames; the limit is {self.max_frames}"
        return None


def parse_resolution(text: str, name: str = "resolution") -> tuple:
    """``'3840x2160'`` -> ``(3840, 2160)`` (long side, short side); ValueError naming ``name``
    and the expected form otherwise."""
    parts = str(text).lower().replace(" ", "").split("x")
    if len(parts) != 2 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise ValueError(f"{name} must be WIDTHxHEIGHT (e.g. 3840x2160), got {text!r}")
    a, b = (int(p) for p in parts)
    return max(a, b), min(a, b)


def default_runs_dir(cwd: Path | None = None) -> Path:
    """The demo's runs folder (``runs/demo``) when it exists, else its parent ``runs``
    (relative to ``cwd``)."""
    demo = Path(cwd or Path.cwd()) / DEFAULT_ROOT
    return demo if demo.is_dir() else demo.parent


def _env_number(name: str, default: float, whole: bool = False) -> float:
    raw = os.environ.get(name)
    if raw in (None, ""):
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number, got {raw!r}") from None
    if value <= 0 or (whole and value != int(value)):
        raise ValueError(
            f"{name} must be a {'whole number' if whole else 'number'} > 0, got {raw!r}"
        )
    return int(value) if whole else value


@dataclass(frozen=True)
class UISettings:
    """What the app reads at start: the runs folder, the limits on user input, the folders
    typed paths may name and the access token (None: no token asked)."""

    runs_dir: Path
    max_upload_mb: int = DEFAULT_MAX_UPLOAD_MB
    max_frames: int = DEFAULT_MAX_FRAMES
    max_checkpoint_mb: int = DEFAULT_MAX_CHECKPOINT_MB
    frame_size: int = DEFAULT_FRAME_SIZE
    max_decoded_mp: float = DEFAULT_MAX_DECODED_MP
    allow_roots: tuple = ()
    idle_minutes: float = DEFAULT_IDLE_MINUTES
    token: Optional[str] = field(default=None, repr=False)
    allow_stream_hosts: tuple = ()
    ice_servers: tuple = ()
    record_live: Optional[Path] = None
    max_resolution: tuple = DEFAULT_MAX_RESOLUTION
    max_video_frames: int = DEFAULT_MAX_VIDEO_FRAMES
    max_uploads: int = DEFAULT_MAX_UPLOADS

    @property
    def video_limits(self) -> VideoLimits:
        """The largest video upload accepted (checked from its header)."""
        return VideoLimits(self.max_resolution, self.max_video_frames)

    @property
    def stream_policy(self):
        """Which stream URLs the server opens (:class:`tsm_apps.live.policy.StreamPolicy`)."""
        from tsm_apps.live.policy import StreamPolicy

        return StreamPolicy(allow_hosts=self.allow_stream_hosts)

    @property
    def max_upload_bytes(self) -> int:
        return int(self.max_upload_mb * 1024 * 1024)

    @property
    def max_checkpoint_bytes(self) -> int:
        return int(self.max_checkpoint_mb * 1024 * 1024)

    @property
    def limits(self) -> DecodeLimits:
        """How much of a video is decoded."""
        return DecodeLimits(self.max_frames, self.frame_size, int(self.max_decoded_mp * 1e6))

    @classmethod
    def from_env(cls) -> "UISettings":
        runs = os.environ.get(ENV_RUNS)
        roots = [r for r in os.environ.get(ENV_ALLOW_ROOTS, "").split(os.pathsep) if r]
        return cls(
            runs_dir=Path(runs) if runs else default_runs_dir(),
            max_upload_mb=_env_number(ENV_MAX_UPLOAD_MB, DEFAULT_MAX_UPLOAD_MB, True),
            max_frames=_env_number(ENV_MAX_FRAMES, DEFAULT_MAX_FRAMES, True),
            max_checkpoint_mb=_env_number(ENV_MAX_CHECKPOINT_MB, DEFAULT_MAX_CHECKPOINT_MB, True),
            frame_size=_env_number(ENV_FRAME_SIZE, DEFAULT_FRAME_SIZE, True),
            max_decoded_mp=_env_number(ENV_MAX_DECODED_MP, DEFAULT_MAX_DECODED_MP),
            allow_roots=tuple(Path(r) for r in roots),
            idle_minutes=_env_number(ENV_IDLE_MINUTES, DEFAULT_IDLE_MINUTES),
            token=os.environ.get(ENV_TOKEN) or None,
            allow_stream_hosts=_env_list(ENV_STREAM_HOSTS),
            ice_servers=_env_list(ENV_ICE_SERVERS),
            record_live=Path(os.environ[ENV_RECORD_LIVE])
            if os.environ.get(ENV_RECORD_LIVE)
            else None,
            max_resolution=parse_resolution(
                os.environ.get(ENV_MAX_RESOLUTION) or "x".join(map(str, DEFAULT_MAX_RESOLUTION)),
                ENV_MAX_RESOLUTION,
            ),
            max_video_frames=_env_number(ENV_MAX_VIDEO_FRAMES, DEFAULT_MAX_VIDEO_FRAMES, True),
            max_uploads=_env_number(ENV_MAX_UPLOADS, DEFAULT_MAX_UPLOADS, True),
        )


def _env_list(name: str) -> tuple:
    """A comma-separated list from the environment (empty: none)."""
    return tuple(x.strip() for x in os.environ.get(name, "").split(",") if x.strip())
