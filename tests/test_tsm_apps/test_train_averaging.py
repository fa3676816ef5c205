import pytest
import torch
from torch import nn

from tsm_apps.train.averaging import AdaptiveBatch, KStepAverager, merge_bn_stats, pack, unpack_


def test_bn_merge_uses_pooled_variance():
    means = torch.tensor([[1.0, 2.0], [3.0, 2.0]])
    variances = torch.tensor([[1.0, 4.0], [1.0, 0.0]])
    mean, var = merge_bn_stats(means, variances)
    # E[x^2] = [(1+1 + 1+9)/2, (4+4 + 0+4)/2] = [6, 6]; var = 6 - mean^2
    assert mean.tolist() == [2.0, 2.0]
    assert var.tolist() == [2.0, 2.0]  # a plain mean of variances would give [1, 2]
    with pytest.raises(ValueError, match=r"\(W, C\)"):
        merge_bn_stats(means, variances[:, :1])


def _worker(w, b, rm, rv, grad):
    net = nn.Sequential(nn.Linear(2, 2, bias=False), nn.BatchNorm1d(2, affine=False))
    with torch.no_grad():
        net[0].weight.copy_(torch.tensor(w))
        net[1].running_mean.copy_(torch.tensor(rm))
        net[1].running_var.copy_(torch.tensor(rv))
    opt = torch.optim.Adam(net.parameters(), lr=b)
    net[0].weight.grad = torch.full((2, 2), grad)
    opt.step()  # exp_avg = 0.1 * g, exp_avg_sq = 0.001 * g^2
    with torch.no_grad():
        net[0].weight.copy_(torch.tensor(w))
    return net, opt


def test_average_round_merges_params_bn_and_adam_moments_by_hand():
    a = _worker([[1.0, 2.0], [3.0, 4.0]], 0.1, [1.0, 2.0], [1.0, 4.0], 1.0)
    b = _worker([[3.0, 2.0], [1.0, 0.0]], 0.1, [3.0, 2.0], [1.0, 0.0], 3.0)
    flat = (pack(*a) + pack(*b)) / 2  # what an all-reduce mean over two workers returns
    for net, opt in (a, b):
        unpack_(net, opt, flat)
        assert net[0].weight.tolist() == [[2.0, 2.0], [2.0, 2.0]]
        assert net[1].running_mean.tolist() == [2.0, 2.0]
        assert net[1].running_var.tolist() == pytest.approx([2.0, 2.0])
        st = opt.state[net[0].weight]
        assert st["exp_avg"] == pytest.approx(torch.full((2, 2), 0.2))  # (0.1 + 0.3) / 2
        assert st["exp_avg_sq"] == pytest.approx(torch.full((2, 2), 0.005))  # (0.001 + 0.009) / 2
    with pytest.raises(ValueError, match="too short"):
        unpack_(a[0], a[1], flat[:-3])


def test_k_step_schedule_and_round_count():
    net = nn.Linear(2, 2)
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    calls = []
    avg = KStepAverager(net, opt, 3, lambda t: calls.append(t.numel()) or t)
    done = [avg.after_step(s, s == 8) for s in range(1, 9)]
    assert [s for s, d in zip(range(1, 9), done) if d] == [3, 6, 8]
    assert avg.rounds == 3 and calls == [6] * 3  # one flat buffer per round: weight + bias
    per_epoch = KStepAverager(net, opt, -1, lambda t: t)
    assert [per_epoch.after_step(s, s == 8) for s in range(1, 9)] == [False] * 7 + [True]


def test_adaptive_batch_follows_algorithm_1():
    # Algorithm 1, line 15: grow by b2 when a < a* x b1 (a* = best before this epoch), b1 = 1
    seq = (50, 60, 60.5, 59, 70, 70, 69.9, 80, 10)
    ab = AdaptiveBatch(batch=4, b1=1.0, b2=2, cap=16)
    # 60 >= 50, 60.5 >= 60: keep; 59 < 60.5: 8; 70, 70: keep; 69.9 < 70: 16; 80 keep; 10: cap
    assert [ab.update(v) for v in seq] == [4, 4, 4, 8, 8, 8, 16, 16, 16]
    ab = AdaptiveBatch(batch=4, b1=0.9, b2=2, cap=64)  # a < 0.9 a*: only large drops
    assert [ab.update(v) for v in (50, 46, 44, 60, 53)] == [4, 4, 8, 8, 16]
    ab2 = AdaptiveBatch(4, 1.0, 2, 16)
    ab2.load_state_dict(ab.state_dict())
    assert (ab2.batch, ab2.best) == (16, 60)
    with pytest.raises(ValueError, match="cap"):
        AdaptiveBatch(8, 1.0, 2, 4)
    with pytest.raises(ValueError, match="rule"):
        AdaptiveBatch(8, 1.0, 2, 8, rule="prose")


def test_adaptive_batch_margin_rule_is_the_prose_reading():
    ab = AdaptiveBatch(batch=4, b1=1.0, b2=2, cap=16, rule="margin")  # a < a* + b1 points
    seq = (50, 60, 60.5, 59, 70, 70, 69.9, 80, 10)
    assert [ab.update(v) for v in seq] == [4, 4, 8, 16, 16, 16, 16, 16, 16]
