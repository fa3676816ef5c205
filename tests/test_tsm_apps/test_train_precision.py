"""The training step's precision (``--amp``, ``--amp-dtype``) and torch.compile's mode
(``--compile-mode``).

:func:`step_precision` decides autocast and loss scaling from the config and the device; mixed
precision stays CUDA only, so the steps below run on the CPU with that decision replaced
(``monkeypatch``) by CPU autocast, and are checked against a reference the test computes with
the same autocast on a copy of the initial model."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from tests.test_tsm_apps.tiny_trainer import tiny_trainer
from tsm_apps.train import load_config
from tsm_apps.train import trainer as trainer_module
from tsm_apps.train.cli import build_parser, main
from tsm_apps.train.hooks.checkpoint import save
from tsm_apps.train.solver import Precision, step_precision
from tsm_apps.train.trainer import Trainer

CPU, CUDA = torch.device("cpu"), torch.device("cuda")


def _trainer(tmp_path, monkeypatch=None, decision=None, **overrides) -> Trainer:
    """A tiny ResNet-18 TSM trainer on the CPU; ``decision``: the precision it is given."""
    if decision is not None:
        monkeypatch.setattr(trainer_module, "step_precision", lambda optim, device: decision)
    return tiny_trainer(tmp_path / "run", **{"dropout": 0.0, "clip_grad": 0.0, **overrides})


def _batch(seed: int = 0) -> tuple:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(4, 2, 3, 32, 32, generator=g), torch.randint(0, 2, (4,), generator=g)


def test_the_precision_of_each_config_and_device():
    def p(device, **kw):
        return tuple(step_precision(load_config(**kw).optim, device))

    assert p(CUDA) == (True, torch.float16, True)  # the default: fp16, loss scaled
    assert p(CUDA, amp_dtype="fp16") == (True, torch.float16, True)
    assert p(CUDA, amp_dtype="bf16") == (True, torch.bfloat16, False)
    assert p(torch.device("cuda:1"), amp_dtype="bf16") == (True, torch.bfloat16, False)
    for kw in ({}, {"amp_dtype": "bf16"}, {"amp": False}):
        assert p(CPU, **kw) == (False, None, False)  # CUDA only
    assert p(CUDA, amp=False) == p(CUDA, amp=False, amp_dtype="bf16") == (False, None, False)


def test_a_cpu_run_takes_fp32_steps_unscaled(tmp_path):
    t = _trainer(tmp_path)
    assert t.precision == Precision(False, None, False) and not t.amp
    assert not t.scaler.is_enabled() and t.scaler.state_dict() == {}
    ref = copy.deepcopy(t.model)
    x, y = _batch()
    loss = t.train_step(x, y)
    assert torch.equal(loss, nn.functional.cross_entropy(ref(x), y))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_an_autocast_step_is_the_reference_step(tmp_path, monkeypatch, dtype):
    """bf16: autocast, no loss scaling (the scaler disabled, its scale 1); fp16: autocast in
    fp16, the loss scaled by an enabled scaler, the gradients unscaled before the update."""
    scale = dtype == torch.float16
    t = _trainer(tmp_path, monkeypatch, Precision(True, dtype, scale))
    assert t.amp and t.scaler.is_enabled() is scale
    ref = copy.deepcopy(t.model)
    x, y = _batch()
    loss = t.train_step(x, y)
    with torch.autocast("cpu", dtype=dtype):
        want = nn.functional.cross_entropy(ref(x), y)
    s = 65536.0 if scale else 1.0  # GradScaler's initial scale
    (want * s).backward()
    with torch.no_grad():
        fp32 = nn.functional.cross_entropy(copy.deepcopy(ref)(x), y)
    assert torch.equal(loss, want.detach().float())
    assert not torch.equal(loss, fp32)  # the step did run under autocast
    for (name, p), q in zip(t.model.named_parameters(), ref.parameters()):
        assert torch.equal(p.grad, q.grad / s), name  # unscaled before the update
    assert t.scaler.get_scale() == s
    assert (t.scaler.state_dict() == {}) is not scale


def test_the_scaler_state_resumes(tmp_path, monkeypatch):
    """An fp16 run's scale loads into an fp16 run; a bf16 run's checkpoint (no scaler state)
    resumes an fp16 run with a fresh scaler, and an fp16 checkpoint resumes a bf16 run."""
    fp16, bf16 = Precision(True, torch.float16, True), Precision(True, torch.bfloat16, False)
    a = _trainer(tmp_path, monkeypatch, fp16)
    a.train_step(*_batch())
    a.scaler.update(1024.0)
    save(a, "last.pth")
    b = _trainer(tmp_path, monkeypatch, fp16)
    assert b.scaler.get_scale() == 65536.0
    assert b.resume() and b.scaler.get_scale() == 1024.0
    c = _trainer(tmp_path, monkeypatch, bf16)
    assert c.resume() and not c.scaler.is_enabled()
    save(c, "last.pth")
    d = _trainer(tmp_path, monkeypatch, fp16)
    assert d.resume() and d.scaler.is_enabled() and d.scaler.get_scale() == 65536.0


def test_torch_compile_receives_the_backend_and_mode(tmp_path, monkeypatch):
    calls = []

    def fake_compile(net, **kwargs):
        calls.append(kwargs)
        return net

    monkeypatch.setattr(torch, "compile", fake_compile)
    _trainer(tmp_path, compile="inductor", compile_mode="reduce-overhead")
    _trainer(tmp_path, compile="aot_eager")
    _trainer(tmp_path)  # compile none: not called
    assert calls == [
        {"backend": "inductor", "mode": "reduce-overhead"},
        {"backend": "aot_eager", "mode": "default"},
    ]


def test_bad_values_are_one_line_errors(capsys):
    with pytest.raises(ValueError, match=r"^optim: amp_dtype must be one of \('fp16', 'bf16'\)"):
        load_config(amp_dtype="fp32")
    with pytest.raises(ValueError, match="^optim: compile_mode must be one of"):
        load_config(compile="inductor", compile_mode="fast")
    with pytest.raises(
        ValueError, match=r"^optim: compile_mode 'reduce-overhead' needs compile 'inductor'"
    ):
        load_config(compile="aot_eager", compile_mode="reduce-overhead")
    for argv in (["--amp-dtype", "fp32"], ["--compile-mode", "fast"]):
        with pytest.raises(SystemExit) as e:
            main(["--data", "d", *argv])
        assert e.value.code == 2
        err = capsys.readouterr().err
        assert "invalid choice" in err and "Traceback" not in err


def test_the_help_says_which_modes_use_cuda_graphs():
    page = " ".join(build_parser().format_help().split())
    assert "--amp-dtype {fp16,bf16} amp's autocast dtype: fp16 (the loss scaled" in page
    compile_help = page.split("--compile {")[1].split("--compile-mode")[0]
    assert "launch-free" not in compile_help and "CUDA graphs" not in compile_help
    assert "default (fused kernels, each still launched from the host: no CUDA graphs)" in page
    assert "reduce-overhead (the compiled kernels replayed from CUDA graphs" in page
    assert "launch-free" not in page  # graphs save the network's launches, not the update's
    assert "--cuda-graphs, --no-cuda-graphs replay the network's forward and backward" in page
