"""Fixtures of the dissect tests (helpers live in dissect_fixtures.py)."""

import pytest
import torch

from dissect_fixtures import SEGMENTS, SIZE, tiny_model


@pytest.fixture
def model() -> torch.nn.Module:
    return tiny_model()


@pytest.fixture
def clips() -> torch.Tensor:
    return torch.randn(2, SEGMENTS, 3, SIZE, SIZE, generator=torch.Generator().manual_seed(1))
