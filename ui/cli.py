"""``tsm ui``: start the Streamlit app (``streamlit run ui/app/main.py``) headless on localhost."""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from .app.settings import (DEFAULT_HOST, DEFAULT_MAX_FRAMES, DEFAULT_MAX_UPLOAD_MB, DEFAULT_PORT,
                       ENV_MAX_FRAMES, ENV_MAX_UPLOAD_MB, ENV_RUNS, default_runs_dir)

APP = Path(__file__).parent / "app" / "main.py"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tsm ui", description="Compare TSM and TSN in the browser.")
    p.add_argument("--runs", type=Path, default=None,
                   help="runs folder to browse (default: runs/demo if it exists, else runs)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help="port (default %(default)s)")
    p.add_argument("--host", default=DEFAULT_HOST,
                   help="address to listen on (default %(default)s: this machine only)")
    p.add_argument("--max-upload-mb", type=float, default=DEFAULT_MAX_UPLOAD_MB,
                   help="largest video upload accepted, in MB (default %(default)s)")
    p.add_argument("--max-frames", type=int, default=DEFAULT_MAX_FRAMES,
                   help="frames of a video the detectors run on (default %(default)s)")
    return p


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The options, checked (a port in range, positive limits)."""
    args = build_parser().parse_args(argv)
    if not 0 < args.port < 65536:
        raise ValueError(f"--port must be in 1..65535, got {args.port}")
    if args.max_upload_mb <= 0 or args.max_frames <= 0:
        raise ValueError("--max-upload-mb and --max-frames must be > 0")
    return args


def streamlit_command(args: argparse.Namespace) -> tuple[list[str], dict[str, str]]:
    """The command line and environment that start the app for ``args``."""
    runs = (args.runs or default_runs_dir()).resolve()
    # Streamlit's own upload cap sits just above ours so that our in-page message, not
    # Streamlit's, tells the user about a file that is too large.
    server_cap_mb = max(1, int(args.max_upload_mb) + 1)
    cmd = [sys.executable, "-m", "streamlit", "run", str(APP),
           "--server.headless", "true", "--server.address", args.host,
           "--server.port", str(args.port), "--server.maxUploadSize", str(server_cap_mb),
           "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
           "--browser.serverAddress", args.host]
    env = dict(os.environ)
    env.update({ENV_RUNS: str(runs), ENV_MAX_UPLOAD_MB: str(args.max_upload_mb),
                ENV_MAX_FRAMES: str(args.max_frames)})
    return cmd, env


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if args.runs is not None and not args.runs.is_dir():
        raise NotADirectoryError(f"--runs {args.runs}: not a folder")
    cmd, env = streamlit_command(args)
    print(f"tsm ui: serving {env[ENV_RUNS]} at http://{args.host}:{args.port} (Ctrl-C stops)")
    try:
        return subprocess.call(cmd, env=env)
    except KeyboardInterrupt:
        return 130
