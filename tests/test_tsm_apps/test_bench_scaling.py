"""The data-parallel cost model of ``tsm bench scaling`` against hand-computed values."""

import pytest

from tsm_apps.bench.scaling_model import (
    CLUSTER,
    WORKERS,
    Cluster,
    fit_network,
    ring_allreduce_s,
    table,
)


def test_ring_allreduce_by_hand():
    # 2 (n - 1) / n * bytes / bw + 2 (n - 1) * latency = 1.5 * 1 + 6 * 1e-3
    assert ring_allreduce_s(4, 1e6, 1e6, 1e-3) == pytest.approx(1.506)
    assert ring_allreduce_s(1, 1e6, 1e6, 1e-3) == 0.0


def test_sync_and_kavg_steps_by_hand():
    c = Cluster(compute_s=0.1, grad_bytes=1e6, avg_bytes=2e6, bandwidth=1e6, latency=0.0)
    assert c.step_s(2) == pytest.approx(0.1 + 1.0)  # 2 * 1/2 * 1e6 / 1e6
    assert c.step_s(2, "kavg", k=8) == pytest.approx(0.1 + 2.0 / 8)
    assert c.efficiency(2) == pytest.approx(0.1 / 1.1)
    assert c.step_s(1) == pytest.approx(0.1)
    fed = Cluster(0.1, 1e6, 2e6, 1e6, 0.0, batch=8, input_rate=40)  # 8 / 40 = 0.2 s > 0.1
    assert fed.step_s(1) == pytest.approx(0.2)


def test_fit_network_recovers_bandwidth_and_latency():
    bw, lat = 1e9, 1e-5
    t_small = ring_allreduce_s(2, 4096, bw, lat)
    t_big = ring_allreduce_s(2, 4e6, bw, lat)
    got = fit_network(2, 4096, t_small, 4e6, t_big)
    assert got == pytest.approx((bw, lat))


def test_seed_table_rows_and_monotone_efficiency():
    rows = table()
    assert len(rows) == 2 + len(WORKERS) and rows[2].startswith("| 8 |")
    effs = [CLUSTER.efficiency(n) for n in WORKERS]
    assert all(a > b for a, b in zip(effs, effs[1:]))
    assert all(CLUSTER.efficiency(n, "kavg", 8) > e for n, e in zip(WORKERS, effs))


def test_seed_sizes_and_round_bytes_are_the_packed_buffer():
    import torch

    from tsm_apps import build_recognizer
    from tsm_apps.bench.scaling_model import R50_BN, R50_PARAMS, model_sizes, round_bytes
    from tsm_apps.train.averaging import pack

    # torchvision ResNet-50 without its fc: 23,508,032 parameters; + 2048 x 400 + 400
    assert R50_PARAMS == 23_508_032 + 2048 * 400 + 400
    assert model_sizes(build_recognizer("resnet50", 400, 8, "offline")) == (R50_PARAMS, R50_BN)
    assert (CLUSTER.grad_bytes, CLUSTER.avg_bytes) == (
        4 * R50_PARAMS,
        4 * (3 * R50_PARAMS + 2 * R50_BN),
    )
    torch.manual_seed(0)
    m = build_recognizer("resnet18", 3, 2, "offline", width=0.125)
    opt = torch.optim.Adam(m.parameters())
    m(torch.randn(2, 2, 3, 32, 32)).sum().backward()
    opt.step()
    params, bn = model_sizes(m)
    assert 4 * pack(m, opt).numel() == round_bytes(params, bn, 2)  # what a round sends


def test_measured_bytes_scale_the_seed_table():
    from tsm_apps.bench.scaling_model import R50_PARAMS, measured_cluster

    m = {"params": 1000, "ddp_bytes": 4000, "round_bytes": 12_100}  # 4 and 12.1 B a parameter
    c = measured_cluster(m)
    assert (c.grad_bytes, c.avg_bytes) == pytest.approx((4 * R50_PARAMS, 12.1 * R50_PARAMS))
    assert c.compute_s == CLUSTER.compute_s and c.bandwidth == CLUSTER.bandwidth


@pytest.mark.slow
def test_two_process_measurement_counts_the_bytes_each_method_sends():
    from tsm_apps.bench.scaling import measure
    from tsm_apps.bench.scaling_model import round_bytes

    m = measure(steps=1, batch=2, reps=1)  # torchrun, 2 gloo processes
    # ResNet-18 at width 0.25, 8 classes: 703,128 parameters, 1,200 BN channels
    assert (m["params"], m["bn_channels"], m["ddp_calls"]) == (703_128, 1_200, 1)
    assert m["ddp_bytes"] == 4 * 703_128 == 2_812_512  # one bucket of fp32 gradients
    assert m["round_bytes"] == round_bytes(703_128, 1_200, 2) == 8_447_136  # Adam: 3P + 2C
