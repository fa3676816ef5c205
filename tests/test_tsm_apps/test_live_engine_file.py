"""``tsm live --checkpoint step.onnx``: an online engine file written by ``tsm export --online
--engine onnxruntime`` answers every frame of real footage as its checkpoint does (top-1 equal,
probabilities within the engine's parity tolerance), carrying each stream's buffers; streams
stepped in one ONNX Runtime call equal each alone; a reset (the frame size changes) zeroes a
stream's buffers; clip engines and engines whose graph and metadata disagree are refused in
one line."""

from __future__ import annotations

import json

import onnx
import pytest
import torch

from tests.test_tsm_apps.test_live_sources import ts_bytes
from tools.sample_videos import sample_video
from tsm_apps import build_recognizer
from tsm_apps.checkpoint.reading import save_checkpoint
from tsm_apps.cli import main
from tsm_apps.data.protocol import TestProtocol
from tsm_apps.data.video import read_video_frames
from tsm_apps.engine.metadata import read_info, write_info
from tsm_apps.engine.precision import TOLERANCE

NAMES = ["push", "pull", "wave", "clap", "jump", "spin"]
PROTO = TestProtocol(crop_size=64, scale_size=72)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """``(checkpoint, online engine, clip engine)``: an offline-shift TSM checkpoint (streamed
    with the causal shift) and the two engines ``tsm export`` writes of it."""
    torch.manual_seed(0)
    model = build_recognizer("resnet18", 6, 8, "offline", width=0.25)
    with torch.no_grad():
        model.fc.weight.mul_(20)
    d = tmp_path_factory.mktemp("engine")
    ck = save_checkpoint(d / "tsm.pth", model, {"classes": NAMES, "test_protocol": PROTO.to_dict()})
    engines = d / "step.onnx", d / "clip.onnx"
    for out, extra in zip(engines, (["--online"], [])):
        assert main(["export", str(ck), "--out", str(out), "--engine", "onnxruntime", *extra]) == 0
    return (ck, *engines)


def live(capsys, *args) -> tuple:
    """``(exit status, stderr lines)`` of ``tsm live ARGS --top-k 6 --no-progress``."""
    rc = main(["live", *map(str, args), "--top-k", "6", "--no-progress"])
    return rc, capsys.readouterr().err.splitlines()


def records(path) -> dict:
    """``{stream: [record]}`` of a JSON-lines file."""
    out: dict = {}
    for line in path.read_text().splitlines():
        r = json.loads(line)
        out.setdefault(r["stream"], []).append(r)
    return out


def probs(ranked: list) -> list:
    """The probability of each class, by index, from a full top-k list."""
    return [p for _, p in sorted((t["index"], t["prob"]) for t in ranked)]


def compare(got: list, want: list) -> float:
    """Asserts the same frames and timestamps, and the same top-1 of the frame and of the running
    window on every frame; returns the largest |Δp| over all classes of both."""
    assert [(r["frame"], r["pts"], r["model"]) for r in got] == [
        (r["frame"], r["pts"], r["model"]) for r in want
    ]
    dp = 0.0
    for g, w in zip(got, want):
        for key in ("top", "window"):
            assert g[key][0]["index"] == w[key][0]["index"]
            dp = max(dp, max(abs(a - b) for a, b in zip(probs(g[key]), probs(w[key]))))
    return dp


def test_the_engine_answers_every_frame_of_real_footage_as_its_checkpoint(files, tmp_path, capsys):
    ck, step, _ = files
    clip = str(sample_video("carphone_pristine.mp4"))  # 120 real frames, 176x144
    want, got = tmp_path / "pth.jsonl", tmp_path / "onnx.jsonl"
    assert live(capsys, clip, "--checkpoint", ck, "--out", want)[0] == 0
    rc, err = live(capsys, clip, "--checkpoint", step, "--out", got)
    assert rc == 0 and err[-1].startswith(f"tsm live: {clip} [recognizer]: 120 frames answered")
    tolerance = read_info(step).parity["tolerance"]
    assert tolerance == TOLERANCE["fp32"]
    assert len(records(got)[clip]) == 120
    assert compare(records(got)[clip], records(want)[clip]) <= tolerance


def fixed_batch(engine, out):
    """``engine`` rewritten with a batch axis fixed at 1 (as other exporters write)."""
    model = onnx.load(str(engine))
    for v in list(model.graph.input) + list(model.graph.output):
        v.type.tensor_type.shape.dim[0].dim_value = 1
    onnx.save(model, str(out))
    return out


def test_two_streams_in_one_call_equal_each_alone(files, tmp_path, capsys):
    _, step, _ = files
    a, b = str(sample_video("carphone_pristine.mp4")), str(sample_video("bikes.mp4"))
    alone = {}
    for clip in (a, b):
        out = tmp_path / f"{len(alone)}.jsonl"
        assert live(capsys, clip, "--checkpoint", step, "--out", out, "--max-frames", 40)[0] == 0
        alone[clip] = [(r["top"], r["window"]) for r in records(out)[clip]]
    one_by_one = fixed_batch(step, tmp_path / "fixed.onnx")
    for engine in (step, one_by_one):
        out = tmp_path / f"both.{engine.stem}.jsonl"
        assert live(capsys, a, b, "--checkpoint", engine, "--out", out, "--max-frames", 40)[0] == 0
        both = records(out)
        assert {r["batch"] for rs in both.values() for r in rs} >= {2}
        for clip in (a, b):  # the floats' exact text
            assert [(r["top"], r["window"]) for r in both[clip]] == alone[clip]


def test_a_frame_size_change_zeroes_the_streams_buffers(files, tmp_path, capsys):
    """Real footage cut over mid-stream: 12 frames at 176x144, then 12 at 640x272."""
    ck, step, _ = files
    first = read_video_frames(sample_video("carphone_pristine.mp4"), range(12))
    then = read_video_frames(sample_video("bikes.mp4"), range(12))
    cut, fresh = tmp_path / "cut.ts", tmp_path / "fresh.ts"
    cut.write_bytes(ts_bytes(first) + ts_bytes(then, start=12))
    fresh.write_bytes(ts_bytes(then, start=12))  # the second part alone, from zero buffers
    out = {}
    for name, model, video in (("pth", ck, cut), ("onnx", step, cut), ("fresh", step, fresh)):
        out[name] = tmp_path / f"{name}.jsonl"
        rc, err = live(capsys, video, "--checkpoint", model, "--out", out[name])
        assert rc == 0
        changed = sum("frame size changed from (144, 176) to (272, 640)" in e for e in err)
        assert changed == (video == cut)
    got, want = records(out["onnx"])[str(cut)], records(out["pth"])[str(cut)]
    assert len(got) == 24
    assert compare(got, want) <= TOLERANCE["fp32"]
    alone = records(out["fresh"])[str(fresh)]  # the running window spans the cut: frames only
    assert [r["top"] for r in got[12:]] == [r["top"] for r in alone]


def test_a_clip_engine_is_refused_in_one_line(files, tmp_path, capsys):
    _, _, clip_engine = files
    clip = sample_video("carphone_pristine.mp4")
    rc, err = live(capsys, clip, "--checkpoint", clip_engine)
    assert (rc, err) == (
        2,
        [
            f"tsm live: error: {clip_engine}: an offline (clip) engine; tsm live steps an online "
            "engine (tsm export CHECKPOINT --online --engine onnxruntime)"
        ],
    )


def test_an_engine_whose_graph_and_metadata_differ_in_size_is_refused(files, tmp_path, capsys):
    _, step, _ = files
    clip = sample_video("carphone_pristine.mp4")
    info = read_info(step)
    info.input_size, info.protocol = 32, info.protocol.with_options(crop_size=32)
    other = tmp_path / "other.onnx"
    other.write_bytes(step.read_bytes())
    write_info(other, info)
    garbage = tmp_path / "garbage.onnx"
    garbage.write_text("not a model")
    for engine, message in (
        (
            other,
            "the engine's graph takes frames (3, 64, 64), its metadata says 32x32 "
            "(crop of 32 px): input sizes differ",
        ),
        (garbage, "ONNX Runtime cannot load it (InvalidProtobuf)"),
    ):
        assert live(capsys, clip, "--checkpoint", engine) == (
            2,
            [f"tsm live: error: {engine}: {message}"],
        )
