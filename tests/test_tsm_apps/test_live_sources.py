"""Live sources: files, frame folders and network streams served here on 127.0.0.1 (UDP MPEG-TS,
HTTP) give the frames the project's readers give; every failure is one line naming the source;
a file waits for the model, a live source keeps only the newest frame. The helpers (MPEG-TS
bytes, a UDP sender, an HTTP server) serve test_live_cli.py and test_live_policy.py too."""

from __future__ import annotations

import functools
import http.server
import io
import os
import socket
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image

from tsm_apps.data.video import read_video_frames
from tsm_apps.data.video_writer import write_video
from tsm_apps.live.policy import StreamPolicy
from tsm_apps.live.sources import Source, SourceError, open_source, pump
from tsm_apps.live.stream import Frame, LiveStream


def frames_of(seed: int, t: int, h: int = 72, w: int = 96) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (t, h, w, 3), dtype=np.uint8)


def ts_bytes(frames: np.ndarray, fps: int = 25, start: int = 0) -> bytes:
    """``frames (T, H, W, 3)`` as an H.264 MPEG-TS stream (a keyframe every 5 frames, no
    B-frames), as a live encoder sends it."""
    buf = io.BytesIO()
    with av.open(buf, "w", format="mpegts") as out:
        s = out.add_stream("libx264", rate=fps, options={"tune": "zerolatency"})
        s.width, s.height, s.pix_fmt = frames.shape[2], frames.shape[1], "yuv420p"
        s.codec_context.gop_size = 5
        for i, a in enumerate(frames):
            f = av.VideoFrame.from_ndarray(a, format="rgb24").reformat(format="yuv420p")
            f.pts = start + i
            out.mux(s.encode(f))
        out.mux(s.encode(None))
    return buf.getvalue()


def decoded(data: bytes) -> list:
    with av.open(io.BytesIO(data)) as c:
        return [f.to_ndarray(format="rgb24") for f in c.decode(video=0)]


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def udp_bound(port: int) -> bool:
    """Whether a socket of this machine listens on UDP ``port`` (read from /proc/net/udp)."""
    lines = Path("/proc/net/udp").read_text().splitlines()[1:]
    return any(int(line.split()[1].split(":")[1], 16) == port for line in lines)


def send_udp(port: int, data: bytes, seconds: float = 0.3) -> threading.Thread:
    """Once a reader listens on ``port``, send ``data`` there in 1316-byte datagrams (7 TS
    packets) spread over ``seconds``, then stop (the thread's ``finished``: when)."""

    def run() -> None:
        deadline = time.monotonic() + 30
        while not udp_bound(port) and time.monotonic() < deadline:
            time.sleep(0.02)
        chunks = [data[i : i + 1316] for i in range(0, len(data), 1316)]
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            for c in chunks:
                s.sendto(c, ("127.0.0.1", port))
                t.finished = time.monotonic()
                time.sleep(seconds / len(chunks))

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


@contextmanager
def http_server(handler):
    """``http://127.0.0.1:PORT`` served by ``handler`` on a thread for the block."""
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


class _Files(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # no access log on stderr
        pass


def serve_folder(folder: Path):
    return http_server(functools.partial(_Files, directory=folder))


def read_all(source: Source) -> tuple:
    """``(frames, error or None)`` of a source read to its end."""
    got, gen = [], source.frames()
    try:
        got.extend(gen)
    except SourceError as e:
        return got, str(e)
    return got, None


LOOPBACK = StreamPolicy.open_all(connect_timeout=5.0, read_timeout=0.5)


def test_a_file_and_a_frame_folder_give_the_readers_frames(tmp_path):
    video = frames_of(0, 8)
    path = write_video(tmp_path / "a.mp4", video, fps=25)
    src = open_source(str(path))
    assert (src.kind, src.live, src.fps) == ("file", False, 25.0)
    frames, error = read_all(src)
    want = read_video_frames(path, range(8))  # what tsm test decodes
    assert error is None and len(frames) == 8
    assert all(np.array_equal(f.image, w) for f, w in zip(frames, want))
    assert [f.index for f in frames] == list(range(8))
    assert [f.pts for f in frames] == pytest.approx([i / 25 for i in range(8)], abs=1e-9)
    assert open_source(str(path), realtime=True).live  # played at its rate: newest frame wins
    names = [tmp_path / f"img_{i:05d}.jpg" for i in (1, 2, 3)]
    for name, im in zip(names, video):
        Image.fromarray(im).save(name, quality=95)
    folder = open_source(str(tmp_path))
    frames, error = read_all(folder)
    assert (folder.kind, folder.live, error) == ("folder", False, None)
    assert [(f.index, f.pts) for f in frames] == [(0, None), (1, None), (2, None)]
    for f, name in zip(frames, names):
        assert np.array_equal(f.image, np.asarray(Image.open(name).convert("RGB")))
    small = open_source(str(path), max_side=48)  # 96x72 -> 48x36
    assert next(small.frames()).image.shape == (36, 48, 3)


def test_bad_files_folders_cameras_and_urls_are_one_line_naming_them(tmp_path):
    (tmp_path / "empty.mp4").write_bytes(b"")
    (tmp_path / "notes.mp4").write_text("not a video\n")
    (tmp_path / "frames").mkdir()
    cases = {
        str(tmp_path / "missing.mp4"): "file not found",
        str(tmp_path / "empty.mp4"): "file is empty (0 bytes)",
        str(tmp_path / "frames"): "no img_00001.jpg in the folder (frames img_00001.jpg, "
        "img_00002.jpg, ...)",
        "camera:97": "no camera at /dev/video97",
    }
    for spec, reason in cases.items():
        with pytest.raises(SourceError) as e:
            open_source(spec)
        assert str(e.value) == f"{spec}: {reason}"
    with pytest.raises(SourceError, match=r"notes\.mp4: cannot open: .*Invalid data"):
        open_source(str(tmp_path / "notes.mp4"))
    with pytest.raises(ValueError, match=r"^file:///etc/passwd: scheme file: is not a stream"):
        open_source("file:///etc/passwd")


def test_a_path_is_never_read_as_an_ffmpeg_protocol(tmp_path, monkeypatch):
    """A file named ``concat:a.mp4`` is that file, not FFmpeg's concat protocol over a.mp4."""
    monkeypatch.chdir(tmp_path)
    write_video("a.mp4", frames_of(1, 3, 64, 64), fps=25)
    write_video(tmp_path / "b.mp4", frames_of(2, 2, 32, 48), fps=25)
    os.rename(tmp_path / "b.mp4", tmp_path / "concat:a.mp4")
    frames, _ = read_all(open_source("concat:a.mp4"))
    assert [f.image.shape for f in frames] == [(32, 48, 3)] * 2


def test_udp_mpegts_is_read_live_and_a_stall_ends_it_with_one_line():
    port, data = free_udp_port(), ts_bytes(frames_of(3, 30))  # FFmpeg probes ~20 frames
    src = open_source(f"udp://127.0.0.1:{port}", LOOPBACK)
    assert (src.kind, src.live, src.fps) == ("url", True, None)
    sender = send_udp(port, data, seconds=0.6)
    frames, error = read_all(src)
    stalled = time.monotonic() - sender.finished
    assert src.fps == 25.0
    want = decoded(data)
    assert len(frames) == len(want) == 30
    assert all(np.array_equal(f.image, w) for f, w in zip(frames, want))
    assert error == (
        f"udp://127.0.0.1:{port}: reading failed: no data within 0.5 s "
        "(the stream does not answer or stalled)"
    )
    assert 0.5 <= stalled < 3  # the read time limit after the last datagram


def test_a_udp_port_nobody_sends_to_and_garbage_bytes_fail_with_one_line():
    quiet = StreamPolicy.open_all(connect_timeout=0.5, read_timeout=0.5)
    port = free_udp_port()
    src = open_source(f"udp://127.0.0.1:{port}", quiet)  # opened by its reader, not here
    t0 = time.monotonic()
    assert read_all(src) == (
        [],
        f"udp://127.0.0.1:{port}: cannot open: no data within 0.5 s "
        "(the stream does not answer or stalled)",
    )
    assert 0.5 <= time.monotonic() - t0 < 3
    port = free_udp_port()  # more than FFmpeg's 1 MiB probe, at once: judged as data
    send_udp(port, os.urandom(1316 * 1000), seconds=0.2)
    frames, error = read_all(open_source(f"udp://127.0.0.1:{port}", LOOPBACK))
    assert frames == [] and error == (
        f"udp://127.0.0.1:{port}: cannot open: Invalid data found when processing input"
    )


def test_an_http_stream_gives_the_served_frames(tmp_path):
    data = ts_bytes(frames_of(4, 12))
    (tmp_path / "live.ts").write_bytes(data)
    with serve_folder(tmp_path) as base:
        src = open_source(f"{base}/live.ts", LOOPBACK)
        frames, error = read_all(src)
    want = decoded(data)
    assert error is None and len(frames) == len(want) == 12 and src.fps == 25.0
    assert all(np.array_equal(f.image, w) for f, w in zip(frames, want))


def _stream(name="s") -> LiveStream:
    return LiveStream(name, None, threading.Condition())


def _consume(stream: LiveStream, every: float) -> list:
    """Take a frame every ``every`` seconds until the stream is done; the frames taken."""
    taken = []
    while not stream.done:
        time.sleep(every)
        with stream._wake:
            f = stream.take()
            stream._wake.notify_all()
        if f is not None:
            taken.append(f.index)
    return taken


def test_a_file_waits_for_the_model_and_a_live_source_keeps_the_newest_frame(tmp_path):
    path = write_video(tmp_path / "a.mp4", frames_of(5, 15), fps=50)
    file = _stream()
    pump(open_source(str(path)), [file])
    assert _consume(file, 0.01) == list(range(15)) and file.dropped == 0
    live = _stream()
    pump(open_source(str(path), realtime=True), [live])  # 15 frames over 0.3 s, taken at 10/s
    taken = _consume(live, 0.1)
    assert live.received == 15 and live.dropped == 15 - len(taken) > 0
    assert taken[-1] == 14 and taken == sorted(taken)
    capped = _stream()
    pump(open_source(str(path)), [capped], max_frames=4)
    assert _consume(capped, 0.0) == [0, 1, 2, 3] and capped.error is None


def test_a_failing_source_ends_every_stream_with_its_one_line():
    """The frame read before the failure is still answered; then each stream has the error."""

    def failing(source):
        yield Frame(np.zeros((4, 4, 3), np.uint8), 0, None, 0.0)
        raise SourceError(source.name, "reading failed: gone")

    def crashing(source):
        raise RuntimeError("boom")
        yield

    for reader, message, frames in (
        (failing, "cam: reading failed: gone", [0]),
        (crashing, "cam: RuntimeError: boom", []),
    ):
        streams = [_stream("a"), _stream("b")]
        pump(Source("cam", "url", True, None, reader), streams)
        if frames:  # ended, not failed, while the frame it sent waits for the model
            for s in streams:
                with s._wake:
                    assert s._wake.wait_for(lambda s=s: s.ended, 5) and s.error is None
        assert [_consume(s, 0.05) for s in streams] == [frames, frames]
        for s in streams:
            with s._wake:
                s._wake.wait_for(lambda s=s: s.error is not None, 5)
        assert [(s.ended, s.error) for s in streams] == [(True, message)] * 2
