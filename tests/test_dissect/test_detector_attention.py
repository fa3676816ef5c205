import pytest
import torch

from dissect.capture import hook_count
from dissect.detector_attention import detector_attention, principal_projection


def _planted(sign: float) -> torch.Tensor:
    """Activations (2, 8, 4, 4) whose main variation is a bright blob at (1, 2)."""
    g = torch.Generator().manual_seed(0)
    pattern = torch.zeros(4, 4)
    pattern[1, 2] = 1.0
    u = torch.rand(8, generator=g) + 0.5
    acts = u[None, :, None, None] * pattern * 5 + 0.01 * torch.randn(2, 8, 4, 4, generator=g)
    return acts * sign


def test_projection_finds_the_planted_pattern_with_a_fixed_sign():
    p = principal_projection(_planted(1.0))
    assert p.shape == (2, 4, 4)
    assert [divmod(int(f.argmax()), 4) for f in p] == [(1, 2), (1, 2)]
    assert (p >= 0).all()


class TupleBackbone(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, stride=4, padding=1)

    def forward(self, x):
        return (x, self.conv(x))


def test_detector_attention_on_a_tuple_backbone():
    bb = TupleBackbone()
    maps = detector_attention(bb, torch.rand(3, 3, 16, 16))
    assert maps.shape == (3, 16, 16)
    assert float(maps.min()) >= 0 and float(maps.max()) <= 1
    assert hook_count(bb) == 0
    with pytest.raises(ValueError, match="level 5 out of range"):
        detector_attention(bb, torch.rand(3, 3, 16, 16), level=5)
    with pytest.raises(ValueError, match=r"\(T, 3, H, W\)"):
        detector_attention(bb, torch.rand(3, 16, 16))
