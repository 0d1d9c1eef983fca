"""The dashboard's time-series core (runtime/timeseries.py) on real expositions of ServiceMetrics: points per
stage, records/s, restarts, the last hour, p95 as Prometheus' histogram_quantile."""
from __future__ import annotations

import numpy as np
import pytest

from anonstream.runtime.metrics import PROCESS_BUCKETS, ServiceMetrics
from anonstream.runtime.timeseries import (Ring, histogram_quantile, merge, quantile_series, rates,
                                           stage_points)


def point(m: ServiceMetrics, at: float):
    return stage_points(m.exposition(), at)[m.stage]


def test_a_point_holds_the_counters_the_lag_and_the_process_histogram():
    m = ServiceMetrics("pii", "0")
    m.observe_batch(0.2, consumed=40, produced=38, dead_lettered=2)
    m.lag = {("t", 0): 7, ("t", 1): 5}
    m.observe_process(0.03)
    p = point(m, 10.0)
    assert (p.at, p.consumed, p.dead_lettered, p.lag) == (10.0, 40, 2, 12)
    assert [b for b, _ in p.buckets] == [*PROCESS_BUCKETS, float("inf")]
    assert dict(p.buckets)[0.025] == 0 and dict(p.buckets)[0.05] == 1 and p.buckets[-1][1] == 1


def test_a_stage_without_partitions_has_no_lag_and_replicas_are_summed():
    a, b = ServiceMetrics("embed", "0"), ServiceMetrics("embed", "1")
    a.observe_batch(0.1, consumed=3, produced=3, dead_lettered=0)
    b.observe_batch(0.1, consumed=4, produced=3, dead_lettered=1)
    b.lag = {("t", 0): 2}
    assert point(a, 1.0).lag is None
    both = merge([point(a, 1.0), point(b, 1.0)])
    assert (both.consumed, both.dead_lettered, both.lag) == (7, 1, 2)


def test_records_per_second_between_scrapes_and_a_restart_counts_from_zero():
    m = ServiceMetrics("swap", "0")
    points = [(100.0, point(m, 100.0))]
    m.observe_records(consumed=50)
    points.append((110.0, point(m, 110.0)))
    m.observe_records(consumed=10)
    points.append((115.0, point(m, 115.0)))
    restarted = ServiceMetrics("swap", "0")
    restarted.observe_records(consumed=6)
    points.append((118.0, point(restarted, 118.0)))
    assert rates(points) == [(110.0, 5.0), (115.0, 2.0), (118.0, 2.0)]


def test_the_ring_keeps_the_last_hour_only():
    ring = Ring(3600)
    for at in range(0, 7201, 600):
        ring.add(float(at), at)
    assert [at for at, _ in ring] == [3600.0, 4200.0, 4800.0, 5400.0, 6000.0, 6600.0, 7200.0]
    assert ring.last == (7200.0, 7200)
    with pytest.raises(ValueError):
        ring.add(7000.0, 0)


def test_histogram_quantile_interpolates_as_prometheus_does():
    m = ServiceMetrics("sink", "0")
    assert histogram_quantile(0.95, point(m, 0).buckets) is None
    for _ in range(20):
        m.observe_process(0.03)          # all in (0.025, 0.05]: 0.025 + 0.025 * 0.95
    assert histogram_quantile(0.95, point(m, 0).buckets) == pytest.approx(0.04875)
    m.observe_process(100.0)             # beyond the last bound: the rank 0.95 * 21 = 19.95 stays in (0.025, 0.05]
    assert histogram_quantile(0.95, point(m, 0).buckets) == pytest.approx(0.025 + 0.025 * 19.95 / 20)
    assert histogram_quantile(1.0, point(m, 0).buckets) == 60.0   # +Inf: the last finite bound


def test_histogram_quantile_lies_in_the_bucket_of_the_true_quantile():
    rng = np.random.default_rng(7)
    m = ServiceMetrics("pii", "0")
    times = rng.lognormal(mean=-3.0, sigma=1.2, size=2000)
    for t in times:
        m.observe_process(float(t))
    estimate = histogram_quantile(0.95, point(m, 0).buckets)
    true = float(np.quantile(times, 0.95))
    bounds = (0.0, *PROCESS_BUCKETS)
    bucket = next(i for i in range(1, len(bounds)) if true <= bounds[i])
    assert bounds[bucket - 1] <= estimate <= bounds[bucket], (estimate, true)


def test_p95_over_the_trailing_window_leaves_older_batches_out():
    m = ServiceMetrics("embed", "0")
    points = [(0.0, point(m, 0.0))]
    for _ in range(10):
        m.observe_process(0.003)
    points.append((30.0, point(m, 30.0)))
    for _ in range(10):
        m.observe_process(2.0)
    points.append((100.0, point(m, 100.0)))
    points.append((105.0, point(m, 105.0)))
    series = dict(quantile_series(points, 0.95, window_s=60))
    assert series[0.0] is None
    assert series[30.0] == pytest.approx(0.0025 + 0.0025 * 0.95)
    assert series[100.0] == pytest.approx(1.0 + 1.5 * 0.95)        # the fast batches are older than the window
    assert series[105.0] == pytest.approx(1.0 + 1.5 * 0.95)        # baseline still t=30, nothing new since
    assert dict(quantile_series(points, 0.95, window_s=200))[105.0] == pytest.approx(1.0 + 1.5 * 0.9)
