"""Time series of the services' own metrics for the audit dashboard: a pure core, no I/O.

A scrape of a service's ``/metrics`` (Prometheus text, ``runtime/metrics.py``) becomes one ``StagePoint`` per
stage (replicas summed): records consumed and dead-lettered (counters), consumer lag (the gauge summed over
partitions) and the cumulative buckets of ``anonstream_process_seconds``. A ``Ring`` keeps the points of the last
``horizon_s`` seconds. From consecutive points: records/s (counter increase over elapsed time, a counter that
went down is a restart and counts from zero, as Prometheus' ``rate`` does) and the p95 processing time of the
batches in a trailing window (at least ``window_s`` seconds) (``histogram_quantile``'s linear interpolation inside the bucket).
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Generic, Iterable, Iterator, TypeVar

from prometheus_client.parser import text_string_to_metric_families

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class StagePoint:
    """One stage's numbers at one scrape (all replicas of the stage summed)."""
    at: float
    consumed: float
    dead_lettered: float
    lag: float | None                      # None: the stage reported no partition
    buckets: tuple[tuple[float, float], ...]  # (upper bound, cumulative count) of the process-time histogram


class Ring(Generic[T]):
    """(time, value) pairs of the last ``horizon_s`` seconds, oldest first; times must not go back."""

    def __init__(self, horizon_s: float):
        self.horizon_s = horizon_s
        self._items: deque[tuple[float, T]] = deque()

    def add(self, at: float, value: T) -> None:
        if self._items and at < self._items[-1][0]:
            raise ValueError(f"time went back: {at} < {self._items[-1][0]}")
        self._items.append((at, value))
        while self._items and self._items[0][0] < at - self.horizon_s:
            self._items.popleft()

    def __iter__(self) -> Iterator[tuple[float, T]]:
        return iter(list(self._items))

    def __len__(self) -> int:
        return len(self._items)

    @property
    def last(self) -> tuple[float, T] | None:
        return self._items[-1] if self._items else None


def stage_points(exposition: str, at: float) -> dict[str, StagePoint]:
    """The ``StagePoint`` of every stage named (label ``stage``) in one Prometheus text exposition."""
    consumed: dict[str, float] = {}
    dead: dict[str, float] = {}
    lag: dict[str, float] = {}
    buckets: dict[str, dict[float, float]] = {}
    for family in text_string_to_metric_families(exposition):
        for sample in family.samples:
            stage = sample.labels.get("stage")
            if stage is None:
                continue
            if sample.name == "anonstream_records_total":
                target = {"consumed": consumed, "dead_lettered": dead}.get(sample.labels.get("outcome"))
                if target is not None:
                    target[stage] = target.get(stage, 0.0) + sample.value
                consumed.setdefault(stage, 0.0)
            elif sample.name == "anonstream_consumer_lag":
                lag[stage] = lag.get(stage, 0.0) + sample.value
            elif sample.name == "anonstream_process_seconds_bucket":
                le = float(sample.labels["le"])
                per_stage = buckets.setdefault(stage, {})
                per_stage[le] = per_stage.get(le, 0.0) + sample.value
    return {stage: StagePoint(at, consumed[stage], dead.get(stage, 0.0), lag.get(stage),
                              tuple(sorted(buckets.get(stage, {}).items())))
            for stage in consumed}


def increase(before: float, after: float) -> float:
    """A counter's increase between two readings; a counter that went down restarted from zero."""
    return after - before if after >= before else after


def rates(points: Iterable[tuple[float, StagePoint]]) -> list[tuple[float, float]]:
    """Records consumed per second between consecutive points, at the later point's time."""
    out, previous = [], None
    for at, point in points:
        if previous is not None and at > previous.at:
            out.append((at, increase(previous.consumed, point.consumed) / (at - previous.at)))
        previous = point
    return out


def histogram_quantile(q: float, buckets: tuple[tuple[float, float], ...]) -> float | None:
    """The q-quantile of a cumulative histogram, as Prometheus' ``histogram_quantile``: linear inside the bucket
    that holds rank q * count (from 0 for the first bucket); the last finite bound if the rank falls in +Inf;
    None without observations."""
    if not buckets or buckets[-1][1] <= 0:
        return None
    rank = q * buckets[-1][1]
    lower_bound, lower_count = 0.0, 0.0
    for bound, count in buckets:
        if count >= rank and count > lower_count:
            if math.isinf(bound):
                return lower_bound
            return lower_bound + (bound - lower_bound) * (rank - lower_count) / (count - lower_count)
        lower_bound, lower_count = bound, count
    return lower_bound


def bucket_increase(before: StagePoint, after: StagePoint) -> tuple[tuple[float, float], ...]:
    """The histogram of the observations between two points (bucket by bucket; a restart counts from zero)."""
    old = dict(before.buckets)
    restarted = any(count < old.get(bound, 0.0) for bound, count in after.buckets)
    return tuple((bound, count if restarted else count - old.get(bound, 0.0)) for bound, count in after.buckets)


def quantile_series(points: Iterable[tuple[float, StagePoint]], q: float, window_s: float) \
        -> list[tuple[float, float | None]]:
    """At every point, the q-quantile of the processing times observed since the last point at least
    ``window_s`` seconds older (the first point if none is); None at the first point, or when no batch was
    processed since."""
    listed = list(points)
    out, start = [], 0
    for i, (at, point) in enumerate(listed):
        while start + 1 < i and listed[start + 1][0] <= at - window_s:
            start += 1
        out.append((at, histogram_quantile(q, bucket_increase(listed[start][1], point)) if start < i else None))
    return out


def merge(points: Iterable[StagePoint]) -> StagePoint:
    """One stage's points read from several endpoints (its replicas) at one scrape, summed."""
    listed = list(points)
    buckets: dict[float, float] = {}
    for point in listed:
        for bound, count in point.buckets:
            buckets[bound] = buckets.get(bound, 0.0) + count
    lags = [p.lag for p in listed if p.lag is not None]
    return StagePoint(max(p.at for p in listed), sum(p.consumed for p in listed),
                      sum(p.dead_lettered for p in listed), sum(lags) if lags else None,
                      tuple(sorted(buckets.items())))
