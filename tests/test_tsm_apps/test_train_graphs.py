"""``tsm train --cuda-graphs``, checked on a CPU with a recording stand-in for
``torch.cuda.make_graphed_callables``.

:class:`RecordingGraphs` does what the real function does to a module in the ways that change a
training step: it runs three warm-up forwards and backwards on the capture's batch (they move
the BN statistics and draw dropout masks), it refuses autocast's cast cache, it replaces the
given module's ``forward``, and a replay reads its input from static memory, runs what was
captured under the autocast state of the capture, and hands back its output and its gradients
in static tensors that the next replay overwrites (``.detach()`` views, as the real graphs
return them). Steps of a trainer whose network replays through it must equal the eager
trainer's steps exactly."""

from __future__ import annotations

import re

import pytest
import torch

from tests.test_tsm_apps.tiny_trainer import tiny_trainer
from tsm_apps.cli import main as tsm_main
from tsm_apps.models.cuda_graph import autocast_state
from tsm_apps.train import load_config
from tsm_apps.train import trainer as trainer_module
from tsm_apps.train.graphs import GraphedNetwork, check_cuda_graphs
from tsm_apps.train.solver import Precision
from tsm_apps.train.trainer import Trainer


class RecordingGraphs:
    """``make_graphed_callables(module, (x,))`` on the CPU (module docstring)."""

    def __init__(self) -> None:
        self.captures: list = []
        self.replays = 0

    def __call__(self, module, sample_args, num_warmup_iters=3):
        if torch.is_autocast_enabled("cpu") and torch.is_autocast_cache_enabled():
            raise RuntimeError("make_graphed_callables does not support the autocast caching")
        (static_x,) = sample_args
        params = [p for p in module.parameters() if p.requires_grad]
        for _ in range(num_warmup_iters):
            torch.autograd.grad(module(static_x).sum(), params)
        state = autocast_state("cpu")
        self.captures.append((tuple(static_x.shape), state))
        static_out = module(static_x).detach()
        static_grads = [torch.zeros_like(p) for p in params]
        forward, rec = module.forward, self

        class Replay(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, *ps):
                rec.replays += 1
                static_x.copy_(x)
                with torch.enable_grad(), torch.autocast("cpu", dtype=state[1], enabled=state[0]):
                    ctx.out = forward(static_x)
                static_out.copy_(ctx.out.detach())
                return static_out.detach()

            @staticmethod
            def backward(ctx, grad):
                for s, g in zip(static_grads, torch.autograd.grad(ctx.out, params, grad)):
                    s.copy_(g)
                return (None, *(s.detach() for s in static_grads))

        module.forward = lambda x: Replay.apply(x, *params)
        return module


def _trainer(tmp_path, monkeypatch, precision: Precision, **overrides) -> Trainer:
    monkeypatch.setattr(trainer_module, "step_precision", lambda optim, device: precision)
    return tiny_trainer(tmp_path / "run", accum_steps=2, dropout=0.5, **overrides)


FP32, BF16 = Precision(False, None, False), Precision(True, torch.bfloat16, False)


@pytest.mark.parametrize("precision", [FP32, BF16], ids=["fp32", "bf16"])
def test_graphed_steps_are_the_eager_steps(tmp_path, monkeypatch, precision):
    """Two micro-batches a step, dropout on, three steps of one shape then one of another:
    one capture per shape, every micro-batch replayed, losses, weights and BN statistics equal
    to the eager trainer's, bit for bit."""
    eager = _trainer(tmp_path, monkeypatch, precision)
    graphed = _trainer(tmp_path, monkeypatch, precision)
    rec = RecordingGraphs()
    graphed.graphs = GraphedNetwork(graphed.model, graphed.precision, make=rec)
    g = torch.Generator().manual_seed(1)
    for n in (4, 4, 4, 6):
        x, y = torch.randn(n, 2, 3, 32, 32, generator=g), torch.randint(0, 2, (n,), generator=g)
        assert torch.equal(graphed.train_step(x, y), eager.train_step(x, y))
        graphed.step, eager.step = graphed.step + 1, eager.step + 1
    state = autocast_state("cpu") if not precision.enabled else (True, torch.bfloat16)
    assert rec.captures == [((2, 2, 3, 32, 32), state), ((3, 2, 3, 32, 32), state)]
    assert rec.replays == 8
    want = eager.model.state_dict()
    for name, v in graphed.model.state_dict().items():
        assert torch.equal(v, want[name]), name  # parameters and BN running statistics
    assert type(graphed.model).forward is type(eager.model).forward  # the network stays eager
    assert "forward" not in vars(graphed.model)


def test_the_trainer_graphs_the_network_only_when_asked(tmp_path, monkeypatch):
    assert _trainer(tmp_path, monkeypatch, FP32).graphs is None
    with pytest.raises(ValueError, match=r"^--cuda-graphs needs a CUDA device, got cpu$"):
        _trainer(tmp_path, monkeypatch, FP32, cuda_graphs=True)


def test_runs_a_graph_cannot_replay_are_refused():
    cuda = torch.device("cuda")
    check_cuda_graphs(load_config(), torch.device("cpu"), 4)  # off: nothing to check
    check_cuda_graphs(load_config(cuda_graphs=True), cuda, 1)
    refused = [
        (dict(multigrid={"enabled": True}), 1, "needs fixed input shapes: not with --multigrid"),
        ({}, 2, "trains in one process: not with 2 processes (DDP or K-step averaging)"),
        (dict(compile="inductor"), 1, "replays the eager network: not with --compile"),
    ]
    for overrides, world, msg in refused:
        with pytest.raises(ValueError, match="^" + re.escape(f"--cuda-graphs {msg}")):
            check_cuda_graphs(load_config(cuda_graphs=True, **overrides), cuda, world)


def test_the_command_refuses_the_cpu_before_decoding(tmp_path, capsys):
    (tmp_path / "clip").mkdir()  # lists are read; no frame is decoded before the refusal
    for name in ("train.txt", "val.txt"):
        (tmp_path / name).write_text(f"{tmp_path / 'clip'} 8 0\n")
    argv = ["train", "--data", str(tmp_path), "--device", "cpu", "--cuda-graphs"]
    assert tsm_main(argv + ["--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert err == "tsm train: error: --cuda-graphs needs a CUDA device, got cpu\n"
