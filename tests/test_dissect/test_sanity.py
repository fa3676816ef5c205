import numpy as np
import torch

from dissect.sanity import randomized_copy, rank_correlation


def test_randomized_copy_changes_weights_not_the_original(model):
    before = {k: v.clone() for k, v in model.state_dict().items()}
    rnd = randomized_copy(model, seed=3)
    for k, v in model.state_dict().items():
        assert torch.equal(v, before[k])
    assert not torch.equal(rnd.fc.weight, model.fc.weight)
    assert not torch.equal(rnd.backbone.conv1.weight, model.backbone.conv1.weight)
    assert torch.equal(randomized_copy(model, seed=3).fc.weight, rnd.fc.weight)
    assert not rnd.training


def test_rank_correlation_exact_values():
    a = np.array([1.0, 2.0, 3.0, 4.0])
    assert rank_correlation(a, a * 10) == 1.0
    assert rank_correlation(a, -a) == -1.0
    assert (
        rank_correlation(a, np.array([1.0, 1.0, 2.0, 2.0]))
        == np.corrcoef([0, 1, 2, 3], [0.5, 0.5, 2.5, 2.5])[0, 1]
    )
    assert rank_correlation(a, np.ones(4)) is None
