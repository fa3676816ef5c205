"""An uploaded video's size is checked from its header before any frame is decoded: an 8K
upload is refused in one line naming the file, its size and the limit, and the server's memory
stays flat (peak RSS, VmHWM reset before the upload, measured in a fresh process, through what the app does with an upload:
keep it, then let a model read it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tools.random_models import write_checkpoints
from tsm_apps.data.decoder import read_header
from ui.app.settings import VideoLimits, parse_resolution

MB = 2**20
RSS_LIMIT_MB = 64  # an 8K RGB frame alone is 95 MB; the app decodes none
REPO = Path(__file__).resolve().parents[2]

PROBE = """
import json, sys
from pathlib import Path
from tsm_apps.evaluation import open_checkpoint, predict
from ui.app.settings import DecodeLimits, VideoLimits
from ui.app.sources.uploads import UploadError, keep_video

video, ckpt, folder = (Path(a) for a in sys.argv[1:4])
data = video.read_bytes()
model = open_checkpoint(ckpt)


def status(key):  # kB, from /proc/self/status
    return int(next(x for x in open("/proc/self/status") if x.startswith(key)).split()[1])


open("/proc/self/clear_refs", "w").write("5")  # the peak (VmHWM) restarts from here
before = status("VmRSS:")
try:  # the app keeps the upload, then the models read the kept file (tsm test's frames)
    decoded, path = keep_video("8k.mp4", data, 2**30, DecodeLimits(300, 360, 70_000_000), folder,
                               VideoLimits())
    predict(model, path)
    refused = None
except UploadError as e:
    refused = str(e)
peak = status("VmHWM:")
print(json.dumps({"refused": refused, "before_kb": before, "peak_kb": peak}))
"""


def write_video(path: Path, width: int, height: int, frames: int = 2) -> Path:
    """A tiny H.264 mp4 of ``frames`` flat ``width x height`` frames (PyAV)."""
    import av

    with av.open(str(path), "w") as out:
        s = out.add_stream("libx264", rate=25)
        s.width, s.height, s.pix_fmt, s.options = width, height, "yuv420p", {"preset": "ultrafast"}
        for i in range(frames):
            f = av.VideoFrame(width, height, "yuv420p")
            for plane in f.planes:
                plane.update(bytes([16 + 40 * i]) * plane.buffer_size)
            out.mux(s.encode(f))
        out.mux(s.encode())
    return path


def test_limits_from_the_header_and_their_refusals(tmp_path):
    small = write_video(tmp_path / "small.mp4", 96, 64, 3)
    assert vars(read_header(small)) == {"width": 96, "height": 64, "frames": 3}
    limits = VideoLimits((3840, 2160), 100)
    assert limits.refusal(3840, 2160, 100) is None
    assert limits.refusal(2160, 3840, 1) is None  # portrait: long side x short side
    assert limits.refusal(7680, 4320, 2) == "7680x4320 frames; the limit is 3840x2160"
    assert limits.refusal(3841, 100, 2) == "3841x100 frames; the limit is 3840x2160"
    assert limits.refusal(640, 360, 101) == "101 frames; the limit is 100"
    assert parse_resolution("1920x1080") == (1920, 1080) == parse_resolution("1080X1920")
    with pytest.raises(ValueError, match=r"^X must be WIDTHxHEIGHT \(e.g. 3840x2160\), got '4k'$"):
        parse_resolution("4k", "X")


def test_an_8k_upload_is_refused_before_decoding_and_memory_stays_flat(tmp_path):
    video = write_video(tmp_path / "8k.mp4", 7680, 4320)
    size_mb = video.stat().st_size / MB
    write_checkpoints(tmp_path / "runs")
    ckpt = tmp_path / "runs" / "train" / "tsm" / "best.pth"
    folder = tmp_path / "session"
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(video), str(ckpt), str(folder)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    grew_mb = (got["peak_kb"] - got["before_kb"]) / 1024
    print(f"8K upload: peak RSS grew {grew_mb:.1f} MB (before {got['before_kb'] / 1024:.0f} MB)")
    assert got["refused"] == (
        f"`8k.mp4` ({size_mb:.1f} MB) has 7680x4320 frames; the limit is 3840x2160 "
        "(`tsm ui --max-resolution WxH --max-video-frames N`)."
    )
    assert grew_mb < RSS_LIMIT_MB
    assert not any(folder.rglob("*.mp4"))  # a refused upload is not kept
