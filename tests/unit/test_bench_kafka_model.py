"""benchmarks/kafka_model.py: percentiles, the open-loop schedule, swap wait, /proc parsing, the scaling model."""
from __future__ import annotations

import math
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from kafka_model import (LATENCY_SEGMENTS, ScalingModel, cpu_seconds, latency_segments,  # noqa: E402
                         peak_rss_mib, percentiles, queue, send_schedule, swap_wait)


def test_percentiles_interpolate_and_are_nan_without_values():
    values = list(range(1, 101))  # 1..100
    p = percentiles(values)
    assert p[50] == pytest.approx(50.5)
    assert p[95] == pytest.approx(95.05)
    assert p[99] == pytest.approx(99.01)
    assert all(math.isnan(v) for v in percentiles([]).values())


def test_send_schedule_is_open_loop_at_the_rate():
    times = send_schedule(5, 2.0, start=10.0)
    assert times == [10.0, 10.5, 11.0, 11.5, 12.0]
    with pytest.raises(ValueError):
        send_schedule(3, 0)


def test_latency_segments_cut_the_latency_minus_swap_wait_at_each_stage():
    last_out = {"ingest": 10.1, "pii": 10.9, "embed": 11.6, "cluster": 11.7, "swap": 14.0}
    wait = swap_wait([11.65, 11.7], [13.5, 14.0])  # 2.3 s held for a partner
    seg = latency_segments(10.0, 14.4, last_out, wait)
    assert list(seg) == list(LATENCY_SEGMENTS)
    assert [round(seg[s], 6) for s in LATENCY_SEGMENTS] == [0.1, 0.8, 0.7, 0.1, 0.0, 0.4]
    assert sum(seg.values()) == pytest.approx(14.4 - 10.0 - wait)


def test_swap_wait_is_last_out_minus_last_in_never_negative():
    assert swap_wait([1.0, 2.0, 3.0], [1.1, 2.1, 33.0]) == pytest.approx(30.0)
    assert swap_wait([1.0, 5.0], [1.2, 4.9]) == 0.0  # a chunk left before the last one arrived: no wait
    with pytest.raises(ValueError):
        swap_wait([], [1.0])


def test_cpu_seconds_and_peak_rss_from_proc_of_this_process():
    stat = Path(f"/proc/{os.getpid()}/stat").read_text()
    times = os.times()
    assert cpu_seconds(stat) == pytest.approx(times.user + times.system, abs=0.1)
    # a command name with spaces and parentheses does not shift the fields
    fields = stat[stat.rindex(")") + 2:]
    assert cpu_seconds(f"42 (a b) c) {fields}") == cpu_seconds(stat)
    assert peak_rss_mib("Name:\tx\nVmHWM:\t  204800 kB\nVmRSS:\t 1 kB\n") == 200.0
    with pytest.raises(ValueError):
        peak_rss_mib("Name:\tx\n")


def test_scaling_model_bounds_by_cores_and_by_the_busiest_stage():
    model = ScalingModel({"pii": 0.5, "embed": 0.3, "sink": 0.1}, infra_cpu_per_doc=0.1)  # 1 CPU-s per document
    # one worker per stage: pii caps at 2 docs/s; 1 core caps at 1 doc/s
    assert model.throughput(cores=1, partitions=4) == pytest.approx(1.0)
    assert model.throughput(cores=8, partitions=4) == pytest.approx(2.0)
    assert model.bottleneck(partitions=4) == "pii"
    # more pii workers help only up to the partitions
    assert model.throughput(cores=8, partitions=4, workers={"pii": 4, "embed": 4}) == pytest.approx(8.0)
    assert model.throughput(cores=8, partitions=1, workers={"pii": 4, "embed": 4}) == pytest.approx(2.0)
    assert model.throughput(cores=4, partitions=8, workers={"pii": 4, "embed": 4}) == pytest.approx(4.0)
    # workers in proportion to cost remove the per-stage caps up to the cores bound
    workers = model.workers_for(8)
    assert workers == {"pii": 4, "embed": 3, "sink": 1}
    assert model.throughput(cores=8, partitions=8, workers=workers) == pytest.approx(8.0)


def test_queue_is_the_time_average_and_peak_of_items_arrived_and_not_departed():
    # two items arrive at 0 and 1, depart at 2 and 4 (out of order does not matter): 1, 2, 1, 0 waiting
    mean, peak = queue([0.0, 1.0], [4.0, 2.0], 0.0, 4.0)
    assert peak == 2
    assert mean == pytest.approx((1 * 1 + 2 * 1 + 1 * 2) / 4)
    # arrivals before the window count from its start; events after its end are ignored
    mean, peak = queue([-5.0], [1.0, 9.0], 0.0, 2.0)
    assert mean == pytest.approx(0.5) and peak == 1
    # a departure at the instant of an arrival counts first: never two waiting
    assert queue([0.0, 1.0], [1.0, 2.0], 0.0, 2.0) == (pytest.approx(1.0), 1)
    with pytest.raises(ValueError):
        queue([], [], 1.0, 1.0)
