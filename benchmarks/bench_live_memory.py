"""``tsm live`` over a long video in constant memory: resident memory at frame 500 and at the end.

A generated video of ``--frames`` frames (default 15,000: ten minutes at 25 fps, 160x120, a
pattern drifting across the frame) is written once with the project's streaming
:class:`~tsm_apps.data.video_writer.VideoWriter` (kept in ``--video``'s folder for the next run)
and streamed by ``tsm live`` in a process of its own with every output on: JSON lines on stdout
(read here line by line), ``--render`` and ``--timeline``. The child's resident memory
(``VmRSS`` of ``/proc/<pid>/status``, the figure ``/proc/self/status`` gives inside it) is read
when its answer for frame 500 arrives, every ``--every`` frames, and at its last answer; the
growth from frame 500 to the end is printed against the target (default <= 20 MB: the timeline
alone keeps ~60 bytes a frame, 0.9 MB for 15,000 frames). Exit status 1 above the target.

    nice .venv/bin/python benchmarks/bench_live_memory.py [--frames 15000] [--target-mb 20]
        [--checkpoint CK] [--video /tmp/tsm_live_memory/long.mp4] [--no-outputs]

Without ``--checkpoint`` a tiny online TSM (ResNet-18 at width 0.25, 64-pixel crops) is made.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def rss_mb(pid: int | str = "self") -> float:
    """Resident memory of process ``pid`` in MB (``VmRSS``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS in /proc/{pid}/status")


def long_video(path: Path, frames: int, fps: float = 25.0, size: tuple = (120, 160)) -> Path:
    """``frames`` frames of a drifting pattern (uint8 RGB, ``size`` = (H, W)), written one at a
    time (reused when the file is there with that many frames)."""
    from tsm_apps.data.decoder import open_video
    from tsm_apps.data.video_writer import VideoWriter

    if path.is_file():
        with open_video(path) as c:
            if c.streams.video[0].frames == frames:
                return path
    h, w = size
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([(x * 255 // w), (y * 255 // h), ((x + y) * 255 // (h + w))], -1)
    with VideoWriter(path, fps, preset="ultrafast") as writer:
        for t in range(frames):
            writer.write(np.roll(base, (t % h, (3 * t) % w), axis=(0, 1)).astype(np.uint8))
    return path


def tiny_checkpoint(folder: Path) -> Path:
    import torch

    from tsm_apps import build_recognizer
    from tsm_apps.checkpoint.reading import save_checkpoint
    from tsm_apps.data.protocol import TestProtocol

    torch.manual_seed(0)
    model = build_recognizer("resnet18", 6, 8, "online", width=0.25)
    meta = {"classes": [f"class{i}" for i in range(6)], "test_protocol": TestProtocol(
        crop_size=64, scale_size=72).to_dict()}  # fmt: skip
    return save_checkpoint(folder / "tiny.pth", model, meta=meta)


def measure(video: Path, checkpoint: Path, out: Path, frames: int, every: int, outputs: bool):
    """Run ``tsm live`` on ``video``; ``[(frame, RSS MB)]`` at frame 500, every ``every`` frames
    and at the last answer; the run's wall seconds and exit status."""
    cmd = [sys.executable, "-m", "tsm_apps.cli", "live", str(video), "--checkpoint",
           str(checkpoint), "--no-progress"]  # fmt: skip
    if outputs:
        cmd += ["--render", str(out), "--timeline", str(out)]
    t0 = time.perf_counter()
    child = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    samples, last = [], None
    for line in child.stdout:
        frame = json.loads(line)["frame"]
        if frame == 500 or (frame % every == 0 and frame > 500) or frame == frames - 1:
            samples.append((frame, rss_mb(child.pid)))
        last = frame
    rc = child.wait()
    if last != frames - 1:
        raise RuntimeError(f"tsm live answered up to frame {last} of {frames} (exit {rc})")
    return samples, time.perf_counter() - t0, rc


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--frames", type=int, default=15000)
    p.add_argument("--every", type=int, default=2500, help="frames between readings")
    p.add_argument("--target-mb", type=float, default=20.0)
    p.add_argument("--checkpoint", type=Path)
    p.add_argument("--video", type=Path, default=Path(tempfile.gettempdir()) / "tsm_live_memory"
                   / "long.mp4")  # fmt: skip
    p.add_argument("--no-outputs", dest="outputs", action="store_false",
                   help="JSON lines only (no --render, --timeline)")  # fmt: skip
    a = p.parse_args()
    a.video.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    video = long_video(a.video, a.frames)
    print(f"video: {video} ({a.frames} frames, 160x120, 25 fps; {time.perf_counter() - t0:.0f} s)")
    with tempfile.TemporaryDirectory() as tmp:
        ck = a.checkpoint or tiny_checkpoint(Path(tmp))
        samples, wall, rc = measure(video, ck, Path(tmp) / "out", a.frames, a.every, a.outputs)
    for frame, mb in samples:
        print(f"frame {frame:>6}: RSS {mb:8.1f} MB")
    growth = samples[-1][1] - samples[0][1]
    verdict = "within" if growth <= a.target_mb else "OVER"
    print(f"growth from frame 500 to the end: {growth:+.1f} MB ({verdict} the {a.target_mb:g} MB "
          f"target); {a.frames / wall:.0f} frames/s over {wall:.0f} s; tsm live exit {rc}")  # fmt: skip
    return 0 if growth <= a.target_mb and rc == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
