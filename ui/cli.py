"""``tsm ui``: start the app's server (``streamlit run ui/server.py``: Streamlit serving
``ui/app/main.py``) headless, on this machine only unless ``--host`` names another address —
which then needs an access token, asked by the server's gate (:mod:`ui.gate`) before any route
answers."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from tsm_apps.options import add_options, option, options_from

from .app.access import is_loopback
from .app.settings import (
    DEFAULT_FRAME_SIZE,
    DEFAULT_HOST,
    DEFAULT_IDLE_MINUTES,
    DEFAULT_MAX_CHECKPOINT_MB,
    DEFAULT_MAX_DECODED_MP,
    DEFAULT_MAX_FRAMES,
    DEFAULT_MAX_RESOLUTION,
    DEFAULT_MAX_UPLOAD_MB,
    DEFAULT_MAX_UPLOADS,
    DEFAULT_MAX_VIDEO_FRAMES,
    DEFAULT_PORT,
    ENV_ALLOW_ROOTS,
    ENV_FRAME_SIZE,
    ENV_ICE_SERVERS,
    ENV_IDLE_MINUTES,
    ENV_MAX_CHECKPOINT_MB,
    ENV_MAX_DECODED_MP,
    ENV_MAX_FRAMES,
    ENV_MAX_RESOLUTION,
    ENV_MAX_UPLOAD_MB,
    ENV_MAX_UPLOADS,
    ENV_MAX_VIDEO_FRAMES,
    ENV_ORIGINS,
    ENV_RECORD_LIVE,
    ENV_RUNS,
    ENV_SIGN_IN_HOURS,
    ENV_STREAM_HOSTS,
    ENV_TOKEN,
    MIN_TOKEN_LENGTH,
    default_runs_dir,
    parse_resolution,
)
from .gate import CREDENTIAL_HOURS, parse_origin

SERVER = Path(__file__).parent / "server.py"
# "viewer": the page's menu offers no developer actions ("Clear cache" empties every user's
# caches) and no "Deploy" button
TOOLBAR_MODE = "viewer"


@dataclass
class UIOptions:
    """What ``tsm ui`` takes (each field a flag: :mod:`tsm_apps.options`)."""

    runs: Optional[Path] = field(
        default=None, **option("runs folder to browse (default: runs/demo if it exists, else runs)")
    )
    port: int = field(default=DEFAULT_PORT, **option("port"))
    host: str = field(
        default=DEFAULT_HOST,
        **option(
            "address to listen on (this machine only by default; any other address needs an "
            f"access token: {ENV_TOKEN} or --token-file)"
        ),
    )
    token_file: Optional[Path] = field(
        default=None,
        **option(
            f"file whose first line is the access token (at least {MIN_TOKEN_LENGTH} characters) "
            "every browser session must give"
        ),
    )
    allow_root: list = field(
        default_factory=list,
        **option(
            "a folder whose files typed paths may name, besides the runs folder and the uploads "
            "(repeatable)",
            action="append",
            type=Path,
            metavar="DIR",
        ),
    )
    max_upload_mb: int = field(
        default=DEFAULT_MAX_UPLOAD_MB, **option("largest video upload, in MB")
    )
    max_checkpoint_mb: int = field(
        default=DEFAULT_MAX_CHECKPOINT_MB, **option("largest checkpoint upload, in MB")
    )
    max_frames: int = field(
        default=DEFAULT_MAX_FRAMES,
        **option(
            "frames of a video decoded into memory: what the player shows and the Detection "
            "view's detectors run on (the Attention view's recognizers sample the whole file "
            "through their test protocol)"
        ),
    )
    frame_size: int = field(
        default=DEFAULT_FRAME_SIZE,
        **option(
            "working resolution: frames are decoded with their shorter side at most this many "
            "pixels"
        ),
    )
    max_decoded_mp: float = field(
        default=DEFAULT_MAX_DECODED_MP,
        **option("decoded pixels per video, in millions (frames x height x width)"),
    )
    max_resolution: str = field(
        default="x".join(map(str, DEFAULT_MAX_RESOLUTION)),
        **option(
            "largest frame size of an uploaded video (WIDTHxHEIGHT, either orientation), read "
            "from its header before decoding: larger uploads are refused",
            metavar="WxH",
        ),
    )
    max_video_frames: int = field(
        default=DEFAULT_MAX_VIDEO_FRAMES,
        **option("longest uploaded video, in frames (from its header): longer ones are refused"),
    )
    max_uploads: int = field(
        default=DEFAULT_MAX_UPLOADS, **option("uploads one browser session may send in an hour")
    )
    idle_minutes: float = field(
        default=DEFAULT_IDLE_MINUTES,
        **option("a session's uploads are removed after this long unused, or when it ends"),
    )
    sign_in_hours: float = field(
        default=CREDENTIAL_HOURS,
        **option(
            "how long a sign-in lasts (it also ends when the browser closes); an open page "
            "stops acting once it has expired"
        ),
    )
    allow_origin: list = field(
        default_factory=list,
        **option(
            "the origin (scheme://host[:port]) the app's pages are served from, when a reverse "
            "proxy changes it (repeatable): websockets, uploads and other requests that act on "
            "the app are refused from any other origin (default: the address the browser used)",
            action="append",
            metavar="URL",
        ),
    )
    allow_stream_hosts: list = field(
        default_factory=list,
        **option(
            "a host name, address or network (10.0.0.0/8; * for any) whose streams the Live "
            "view may open besides public addresses (repeatable); loopback, private and "
            "link-local addresses are refused without it",
            action="append",
            metavar="HOST",
        ),
    )
    ice_server: list = field(
        default_factory=list,
        **option(
            "a STUN/TURN server for the Live view's WebRTC (stun:host:port; repeatable): "
            "browsers on other networks need one; none on this machine or a LAN",
            action="append",
            metavar="URL",
        ),
    )
    record_live: Optional[Path] = field(
        default=None,
        **option(
            "keep every frame the Live view's models answer, with the answers, in this folder "
            "(to re-run a live session offline)"
        ),
    )


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tsm ui", description="Compare TSM and TSN in the browser.")
    return add_options(p, UIOptions)


def parse_args(argv: list[str]) -> UIOptions:
    """The options, checked (a port in range, positive limits)."""
    args = options_from(UIOptions, build_parser().parse_args(argv))
    if not 0 < args.port < 65536:
        raise ValueError(f"--port must be in 1..65535, got {args.port}")
    limits = (
        "max_upload_mb",
        "max_checkpoint_mb",
        "max_frames",
        "frame_size",
        "max_decoded_mp",
        "idle_minutes",
        "max_video_frames",
        "max_uploads",
    )
    bad = [f"--{n.replace('_', '-')}" for n in limits if getattr(args, n) <= 0]
    if bad:
        raise ValueError(f"{', '.join(bad)} must be > 0")
    parse_resolution(args.max_resolution, "--max-resolution")
    for root in args.allow_root:
        if not root.is_dir():
            raise NotADirectoryError(f"--allow-root {root}: not a folder")
    return args


def access_token(args: UIOptions) -> str | None:
    """The token sessions must give (from ``--token-file``, else the environment); required,
    and at least :data:`MIN_TOKEN_LENGTH` characters, when ``--host`` is not a loopback
    address. ValueError in one line otherwise."""
    token = os.environ.get(ENV_TOKEN) or None
    if args.token_file is not None:
        if not args.token_file.is_file():
            raise FileNotFoundError(f"--token-file {args.token_file}: not found")
        lines = args.token_file.read_text(encoding="utf-8").splitlines()
        token = lines[0].strip() if lines else ""
    if token is None and not is_loopback(args.host):
        raise ValueError(
            f"--host {args.host} lets other machines reach the app: set an access "
            f"token ({ENV_TOKEN}=... or --token-file FILE) or use --host "
            f"{DEFAULT_HOST}"
        )
    if token is not None and len(token) < MIN_TOKEN_LENGTH:
        raise ValueError(
            f"the access token has {len(token)} characters; at least {MIN_TOKEN_LENGTH} are needed"
        )
    return token


def _positive(flag: str, value: float) -> float:
    if not value > 0:
        raise ValueError(f"{flag} {value}: expected a positive number")
    return value


def streamlit_command(args: UIOptions) -> tuple[list[str], dict[str, str]]:
    """The command line and environment that start the app's server for ``args``."""
    runs = (args.runs or default_runs_dir()).resolve()
    token = access_token(args)
    # each uploader has its own limit (max_upload_size); the server's is the larger one
    server_cap_mb = max(args.max_upload_mb, args.max_checkpoint_mb)
    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(SERVER),
        "--server.headless",
        "true",
        "--server.address",
        args.host,
        "--server.port",
        str(args.port),
        "--server.maxUploadSize",
        str(server_cap_mb),
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
        "--server.enableAgentApi",
        "false",
        "--browser.serverAddress",
        args.host,
        "--client.toolbarMode",
        TOOLBAR_MODE,
    ]
    env = {k: v for k, v in os.environ.items() if k != ENV_TOKEN}
    env.update(
        {
            ENV_RUNS: str(runs),
            ENV_MAX_UPLOAD_MB: str(args.max_upload_mb),
            ENV_MAX_CHECKPOINT_MB: str(args.max_checkpoint_mb),
            ENV_MAX_FRAMES: str(args.max_frames),
            ENV_FRAME_SIZE: str(args.frame_size),
            ENV_MAX_DECODED_MP: str(args.max_decoded_mp),
            ENV_IDLE_MINUTES: str(args.idle_minutes),
            ENV_MAX_RESOLUTION: "x".join(map(str, parse_resolution(args.max_resolution))),
            ENV_MAX_VIDEO_FRAMES: str(args.max_video_frames),
            ENV_MAX_UPLOADS: str(args.max_uploads),
            ENV_ALLOW_ROOTS: os.pathsep.join(str(r.resolve()) for r in args.allow_root),
            ENV_STREAM_HOSTS: ",".join(args.allow_stream_hosts),
            ENV_ICE_SERVERS: ",".join(args.ice_server),
            ENV_ORIGINS: ",".join(parse_origin(o) for o in args.allow_origin),
            ENV_SIGN_IN_HOURS: str(_positive("--sign-in-hours", args.sign_in_hours)),
            ENV_RECORD_LIVE: str(args.record_live.resolve()) if args.record_live else "",
        }
    )
    if token is not None:
        env[ENV_TOKEN] = token
    return cmd, env


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if args.runs is not None and not args.runs.is_dir():
        raise NotADirectoryError(f"--runs {args.runs}: not a folder")
    cmd, env = streamlit_command(args)
    guard = "access token required" if ENV_TOKEN in env else "this machine only"
    print(
        f"tsm ui: serving {env[ENV_RUNS]} at http://{args.host}:{args.port} ({guard}; Ctrl-C stops)"
    )
    sys.stdout.flush()
    # the server takes this process's place: nothing stays behind holding this command's
    # imports (torch, ~700 MB) while it only waits for the server
    os.execve(cmd[0], cmd, env)
    return 0  # not reached
