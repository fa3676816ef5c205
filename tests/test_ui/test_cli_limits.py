"""``tsm ui``'s upload limits and its words about them: the header limits reach the server's
settings, bad values are one-line errors, ``--max-frames`` says what it bounds."""

from __future__ import annotations

import pytest

from ui import cli
from ui.app.settings import (
    ENV_MAX_RESOLUTION,
    ENV_MAX_UPLOADS,
    ENV_MAX_VIDEO_FRAMES,
    UISettings,
    VideoLimits,
)


def test_header_limits_and_upload_count_reach_the_app(tmp_path, monkeypatch):
    argv = ["--runs", str(tmp_path), "--max-resolution", "1080x1920", "--max-video-frames", "900"]
    _, env = cli.streamlit_command(cli.parse_args([*argv, "--max-uploads", "4"]))
    assert (env[ENV_MAX_RESOLUTION], env[ENV_MAX_VIDEO_FRAMES], env[ENV_MAX_UPLOADS]) == (
        "1920x1080",
        "900",
        "4",
    )
    for name in (ENV_MAX_RESOLUTION, ENV_MAX_VIDEO_FRAMES, ENV_MAX_UPLOADS):
        monkeypatch.setenv(name, env[name])
    s = UISettings.from_env()
    assert s.video_limits == VideoLimits((1920, 1080), 900) and s.max_uploads == 4
    _, env = cli.streamlit_command(cli.parse_args(["--runs", str(tmp_path)]))
    assert (env[ENV_MAX_RESOLUTION], env[ENV_MAX_VIDEO_FRAMES], env[ENV_MAX_UPLOADS]) == (
        "3840x2160",
        "54000",
        "30",
    )


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--max-resolution", "8k"], "--max-resolution must be WIDTHxHEIGHT"),
        (["--max-resolution", "0x100"], "--max-resolution must be WIDTHxHEIGHT"),
        (["--max-video-frames", "0"], "--max-video-frames must be > 0"),
        (["--max-uploads", "-1"], "--max-uploads must be > 0"),
    ],
)
def test_bad_limits_are_one_line_errors(argv, message):
    with pytest.raises(ValueError, match=f"^{message}"):
        cli.parse_args(argv)


def test_max_frames_help_says_what_it_bounds():
    """``--max-frames`` bounds the frames decoded into memory (the player, the detectors), not
    what the recognizers sample: they read the whole file through their test protocol."""
    shown = " ".join(cli.build_parser().format_help().split())
    assert (
        "--max-frames MAX_FRAMES frames of a video decoded into memory: what the player shows "
        "and the Detection view's detectors run on (the Attention view's recognizers sample "
        "the whole file through their test protocol)"
    ) in shown
