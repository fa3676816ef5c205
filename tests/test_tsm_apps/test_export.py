"""ONNX export: onnxruntime matches PyTorch (offline clips, online steps with fed-back buffers),
also for a batch size other than the one traced."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort  # noqa: E402  (required: a missing package fails, never skips)
import pytest
import torch

from tsm_apps import OnlineRecognizer, build_recognizer
from tsm_apps.checkpoint.export import export_onnx, online_buffer_shapes
from tsm_apps.checkpoint.reading import save_checkpoint
from tsm_apps.cli import main as tsm_main

S = 32


def session(path):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])


def tiny(arch: str, t: int, shift: str = "offline", seed: int = 0):
    torch.manual_seed(seed)
    model = build_recognizer(arch, 6, num_segments=t, shift=shift, width=0.125).eval()
    with torch.no_grad():
        for m in model.modules():  # non-trivial BN statistics and classifier
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.normal_(0, 0.1)
                m.running_var.uniform_(0.5, 1.5)
        model.fc.weight.normal_(0, 0.5)
    return model


@pytest.mark.parametrize("arch,t", [("resnet18", 4), ("mobilenetv2", 3)])
def test_offline_parity_any_batch(tmp_path, arch, t):
    model = tiny(arch, t)
    path = export_onnx(model, tmp_path / "m.onnx", input_size=(S, S), batch=2)
    sess = session(path)
    assert [i.name for i in sess.get_inputs()] == ["clips"]
    assert sess.get_inputs()[0].shape == ["batch", t, 3, S, S]
    for n in (1, 3):
        x = torch.randn(n, t, 3, S, S, generator=torch.Generator().manual_seed(n))
        with torch.no_grad():
            ref = model(x).numpy()
        (out,) = sess.run(None, {"clips": x.numpy()})
        assert out.shape == (n, 6)
        assert np.abs(out - ref).max() <= 1e-4
        if n == 3:  # clips stay independent: a batch of one gives the same first row
            (one,) = sess.run(None, {"clips": x[:1].numpy()})
            assert np.abs(one[0] - out[0]).max() <= 1e-4


@pytest.mark.parametrize("arch", ["mobilenetv2", "resnet18"])
def test_online_step_parity_with_fed_back_buffers(tmp_path, arch):
    model = tiny(arch, 4, shift="online", seed=1)
    path = export_onnx(model, tmp_path / "step.onnx", online=True, input_size=(S, S), batch=1)
    sess = session(path)
    names = [i.name for i in sess.get_inputs()]
    shapes = online_buffer_shapes(model, 3, (S, S))
    assert names == ["frame"] + [f"buffer_{i}" for i in range(len(shapes))] and shapes
    assert [o.name for o in sess.get_outputs()][:2] == ["logits", "new_buffer_0"]
    frames = torch.randn(5, 3, 3, S, S, generator=torch.Generator().manual_seed(2))
    buffers = [np.zeros(s, np.float32) for s in shapes]
    with OnlineRecognizer(model) as rec:
        for frame in frames:
            ref = rec.step(frame).numpy()
            ref_buffers = [b.numpy() for b in rec.state.buffers]
            logits, *buffers = sess.run(
                None, {"frame": frame.numpy(), **{f"buffer_{i}": b for i, b in enumerate(buffers)}}
            )
            assert np.abs(logits - ref).max() <= 1e-4
            assert all(np.abs(b - r).max() <= 1e-4 for b, r in zip(buffers, ref_buffers))
    # streaming the clip equals the online model on the whole clip (last frame's logits)
    clip = frames[:, 0].unsqueeze(0)[:, :4]
    with torch.no_grad():
        frame_logits = model.fc(model.features(clip).mean(dim=(3, 4)))[0, -1].numpy()
    buffers = [np.zeros((1,) + s[1:], np.float32) for s in shapes]
    for frame in clip[0]:
        logits, *buffers = sess.run(
            None,
            {"frame": frame[None].numpy(), **{f"buffer_{i}": b for i, b in enumerate(buffers)}},
        )
    assert np.abs(logits[0] - frame_logits).max() <= 1e-4


def test_cli_export(tmp_path, capsys):
    model = tiny("resnet18", 2)
    save_checkpoint(tmp_path / "c.pt", model)
    out = tmp_path / "sub" / "m.onnx"
    assert tsm_main(["export", str(tmp_path / "c.pt"), "--out", str(out), "--size", "32"]) == 0
    assert "offline clip (T=2)" in capsys.readouterr().out
    x = torch.randn(2, 2, 3, S, S)
    with torch.no_grad():
        assert (
            np.abs(session(out).run(None, {"clips": x.numpy()})[0] - model(x).numpy()).max() <= 1e-4
        )
    online = tmp_path / "o.onnx"
    assert (
        tsm_main(
            ["export", str(tmp_path / "c.pt"), "--out", str(online), "--online", "--size", "32"]
        )
        == 0
    )
    captured = capsys.readouterr()
    assert "offline (bi-directional)" in captured.err and "online step" in captured.out
    assert [i.name for i in session(online).get_inputs()][0] == "frame"
    assert tsm_main(["export", str(tmp_path / "none.pt"), "--out", str(out)]) == 2
    assert "checkpoint not found" in capsys.readouterr().err
