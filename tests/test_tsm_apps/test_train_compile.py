"""``--compile``: the trainer's network under ``torch.compile`` takes the same steps as the eager
one. ``aot_eager`` traces exactly what a compiler receives (Dynamo, then AOT autograd: the shift
as slices and ``torch.cat``) without generating code, so two real steps run on the CPU in
seconds; the Inductor backend compiles that same graph."""

from __future__ import annotations

import pytest
import torch

from tests.test_tsm_apps.tiny_trainer import tiny_trainer
from tsm_apps.train import load_config
from tsm_apps.train.trainer import Trainer


def _trainer(tmp_path, compile_backend: str) -> Trainer:
    return tiny_trainer(tmp_path / compile_backend, seed=None, dropout=0.0, compile=compile_backend)


def test_compiled_network_takes_the_eager_steps(tmp_path):
    torch._dynamo.reset()
    eager, compiled = _trainer(tmp_path, "none"), _trainer(tmp_path, "aot_eager")
    assert eager.net is eager.model
    assert isinstance(compiled.net, torch._dynamo.eval_frame.OptimizedModule)
    assert compiled.net._orig_mod is compiled.model  # checkpoints save the plain model
    g = torch.Generator().manual_seed(0)
    for _ in range(2):
        x, y = torch.randn(4, 2, 3, 32, 32, generator=g), torch.randint(0, 2, (4,), generator=g)
        a, b = eager.train_step(x, y), compiled.train_step(x, y)
        assert float(b) == pytest.approx(float(a), rel=1e-5)
    for (name, p), q in zip(eager.model.named_parameters(), compiled.model.parameters()):
        assert torch.allclose(p, q, atol=1e-6), name
    assert not torch.equal(eager.model.fc.weight, _trainer(tmp_path, "none").model.fc.weight)


def test_compile_backend_is_checked():
    with pytest.raises(ValueError, match="compile must be one of"):
        load_config(compile="tensorrt")
