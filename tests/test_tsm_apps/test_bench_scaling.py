"""The data-parallel cost model of ``tsm bench scaling`` against hand-computed values."""
import pytest

from tsm_apps.bench.scaling import CLUSTER, WORKERS, Cluster, fit_network, ring_allreduce_s, table


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
