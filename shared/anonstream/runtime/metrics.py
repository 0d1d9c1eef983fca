"""Prometheus metrics of a service, all produced by prometheus-client and served by the service's own event loop.

Each ``ServiceMetrics`` owns a ``CollectorRegistry``; ``GET /metrics`` is ``generate_latest(registry)`` (text
format 0.0.4). Nothing is formatted by hand. The registry holds

* ``anonstream_records_total{stage, instance, outcome}`` — records consumed, produced and dead-lettered: the
  counter ``anonstream_records`` (prometheus-client adds ``_total``, and ``anonstream_records_created``);
* ``anonstream_batch_seconds_sum`` / ``_count`` — time from poll to commit of each batch (a summary), and the gauge
  ``anonstream_last_batch_timestamp_seconds`` (after the first batch);
* ``anonstream_consumer_lag{topic, partition}`` — records between the committed position and the partition's end
  (a gauge; partitions no longer assigned are dropped);
* ``anonstream_process_seconds`` — time the stage core took per batch (decode, validate, process, validate
  outputs), a histogram (``_bucket{le}``, ``_sum``, ``_count``);
* ``anonstream_end_to_end_seconds`` — per sanitized document (the sink only): from when the document was
  appended to the documents topic (its Kafka timestamp) until the sink's produce of the sanitized document
  was acknowledged, a histogram. The time travels as the ``anonstream-ingested-at`` record header
  (``runtime/service.py``);
* ``anonstream_<stage>_<name>`` — the stage's own numbers (``Stage.metrics()``), read at scrape time by a custom
  collector (``StageCollector``) as gauge families: a number is one series, a mapping one series per key (label
  ``key``), and text values (model or release versions) one ``anonstream_<stage>_info`` series (an info family)
  whose labels carry them. One family per name: of stage keys that give the same name the first (sorted) wins,
  and the info series wins over a number keyed ``info``.

The counter, the summary and the histograms also carry prometheus-client's ``<name>_created`` series.
``GET /healthz`` returns 200 while the service loop runs, 503 once it is stopping. A shell may serve more
paths on the same port (``routes``: the audit service's dashboard, ``runtime/dashboard.py``).
Every series carries the labels ``stage`` and ``instance``.

Metrics carry numbers, stage names, topic names and versions: never record content. Text values of
``Stage.metrics()`` are limited to ``MAX_INFO_CHARS`` characters of ``[A-Za-z0-9._:@/+-]`` (versions and hashes);
any other text value (and one keyed ``stage`` or ``instance``) is dropped, never turned into a label.
"""
from __future__ import annotations

import asyncio
import logging
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import MappingProxyType
from typing import Any, Callable, Mapping

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Summary, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.metrics_core import GaugeMetricFamily, InfoMetricFamily, Metric
from prometheus_client.registry import Collector

log = logging.getLogger(__name__)

MAX_INFO_CHARS = 80
_NAME_BAD = re.compile(r"[^a-zA-Z0-9_]")
_INFO_OK = re.compile(r"^[A-Za-z0-9._:@/+-]+$")
BASE_LABELS = ("stage", "instance")
OUTCOMES = ("consumed", "produced", "dead_lettered")


def metric_name(*parts: str) -> str:
    name = "_".join(_NAME_BAD.sub("_", p) for p in parts if p)
    return name if not name[:1].isdigit() else f"_{name}"


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and value == value:
        return float(value)
    return None


def info_value(value: Any) -> str | None:
    """A text value that may become a label value (a version or a hash), else None."""
    if isinstance(value, str) and len(value) <= MAX_INFO_CHARS and _INFO_OK.match(value):
        return value
    return None


PROCESS_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
END_TO_END_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0)

StageMetrics = Callable[[], Mapping[str, Any]]


class StageCollector(Collector):
    """The stage's own numbers (``Stage.metrics()``), read at each scrape and yielded as metric families."""

    def __init__(self, stage: str, instance: str, source: StageMetrics | None = None):
        self.stage, self.instance = stage, instance
        self.source: StageMetrics = source or (lambda: {})

    def collect(self) -> Iterator[Metric]:
        yield from self.families(self.source() or {})

    def families(self, values: Mapping[str, Any]) -> Iterator[Metric]:
        base = [self.stage, self.instance]
        families: dict[str, GaugeMetricFamily] = {}  # one family per name, or the exposition would be invalid
        info: dict[str, str] = {}
        for key, value in sorted(values.items(), key=lambda kv: str(kv[0])):
            key = str(key)
            name = metric_name("anonstream", self.stage, key)
            number = _number(value)
            if number is not None:
                family = GaugeMetricFamily(name, f"Stage metric {key}.", labels=BASE_LABELS)
                family.add_metric(base, number)
            elif isinstance(value, Mapping):
                family = GaugeMetricFamily(name, f"Stage metric {key}, by key.", labels=(*BASE_LABELS, "key"))
                for k, v in sorted(value.items(), key=lambda kv: str(kv[0])):
                    if (n := _number(v)) is not None:
                        family.add_metric([*base, str(k)], n)
            else:  # text: a label of the info series if it is a version or a hash, else dropped
                label = metric_name(key)
                if (text := info_value(value)) is not None and label not in BASE_LABELS \
                        and not label.startswith("__"):
                    info[label] = text
                continue
            if family.samples:
                families.setdefault(name, family)
        info_family = None
        if info:
            info_family = InfoMetricFamily(metric_name("anonstream", self.stage), "Stage versions.",
                                           labels=BASE_LABELS)
            info_family.add_metric(base, info)
            families.pop(f"{info_family.name}_info", None)
        yield from families.values()
        if info_family is not None:
            yield info_family

class ServiceMetrics:
    """What the service shell counts, with the stage's own numbers, in one registry per service."""

    def __init__(self, stage: str, instance: str, stage_metrics: StageMetrics | None = None,
                 registry: CollectorRegistry | None = None):
        self.stage, self.instance = stage, instance
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        self._records = Counter("anonstream_records", "Records consumed, produced and dead-lettered.",
                                (*BASE_LABELS, "outcome"), registry=r)
        for outcome in OUTCOMES:  # zero series from the start
            self._records.labels(stage, instance, outcome)
        self._batch_seconds = Summary("anonstream_batch_seconds", "Time from poll to commit of a batch.",
                                      BASE_LABELS, registry=r).labels(stage, instance)
        self._last_batch = Gauge("anonstream_last_batch_timestamp_seconds", "When the last batch was committed.",
                                 BASE_LABELS, registry=r)
        self._lag_gauge = Gauge("anonstream_consumer_lag",
                                "Records between the committed position and the partition end.",
                                (*BASE_LABELS, "topic", "partition"), registry=r)
        self._lag: dict[tuple[str, int], int] = {}
        self.process_seconds = Histogram(
            "anonstream_process_seconds", "Time the stage core took per batch.", BASE_LABELS,
            registry=r, buckets=PROCESS_BUCKETS).labels(stage, instance)
        self.end_to_end_seconds = Histogram(
            "anonstream_end_to_end_seconds", "Document appended to the documents topic until its sanitized "
            "version was acknowledged.", BASE_LABELS, registry=r, buckets=END_TO_END_BUCKETS)
        if stage == "sink":  # the only stage that writes sanitized documents: a zero series from the start
            self.end_to_end_seconds.labels(stage, instance)
        self.stage_collector = StageCollector(stage, instance, stage_metrics)
        r.register(self.stage_collector)
        self._render = threading.Lock()

    # -- what the shell observes

    def observe_batch(self, seconds: float, consumed: int, produced: int, dead_lettered: int) -> None:
        self.observe_records(consumed=consumed, produced=produced, dead_lettered=dead_lettered)
        self._batch_seconds.observe(max(0.0, seconds))
        self._last_batch.labels(self.stage, self.instance).set_to_current_time()

    def observe_records(self, **counts: int) -> None:
        """Add to the record counts by outcome (``consumed``, ``produced``, ``dead_lettered``)."""
        for outcome, n in counts.items():
            if outcome not in OUTCOMES:
                raise ValueError(f"unknown outcome {outcome!r}")
            if n:
                self._records.labels(self.stage, self.instance, outcome).inc(n)

    def observe_process(self, seconds: float) -> None:
        self.process_seconds.observe(max(0.0, seconds))

    def observe_end_to_end(self, seconds: float) -> None:
        self.end_to_end_seconds.labels(self.stage, self.instance).observe(max(0.0, seconds))

    @property
    def lag(self) -> Mapping[tuple[str, int], int]:
        return MappingProxyType(dict(self._lag))

    @lag.setter
    def lag(self, lag: Mapping[tuple[str, int], int]) -> None:
        """The consumer lag per (topic, partition) now; partitions missing from ``lag`` lose their series."""
        for topic, partition in set(self._lag) - set(lag):
            self._lag_gauge.remove(self.stage, self.instance, topic, str(partition))
        for (topic, partition), n in lag.items():
            self._lag_gauge.labels(self.stage, self.instance, topic, str(partition)).set(n)
        self._lag = dict(lag)

    # -- read back (logs, the audit dashboard), from the metrics themselves

    @property
    def records(self) -> Mapping[str, int]:
        """Records by outcome so far (read-only; count with ``observe_batch`` / ``observe_records``)."""
        out = dict.fromkeys(OUTCOMES, 0)
        for family in self._records.collect():
            for sample in family.samples:
                if sample.name.endswith("_total"):
                    out[sample.labels["outcome"]] = int(sample.value)
        return MappingProxyType(out)

    @property
    def last_batch_at(self) -> float | None:
        """Epoch seconds of the last committed batch, None before the first."""
        for family in self._last_batch.collect():
            for sample in family.samples:
                return sample.value
        return None

    # -- exposition

    def exposition(self, stage_metrics: Mapping[str, Any] | None = None) -> str:
        """``generate_latest(registry)``; ``stage_metrics`` given, this scrape shows those stage numbers instead of
        the collector's source."""
        with self._render:
            if stage_metrics is None:
                return generate_latest(self.registry).decode()
            with self._pinned(stage_metrics):
                return generate_latest(self.registry).decode()

    @contextmanager
    def _pinned(self, values: Mapping[str, Any]):
        collector, source = self.stage_collector, self.stage_collector.source
        collector.source = lambda: values
        try:
            yield
        finally:
            collector.source = source


Route = Callable[[], tuple[str, str | bytes]]  # () -> (content type, body)


def respond(request_line: str, render: Callable[[], str], healthy: Callable[[], bool],
            routes: Mapping[str, Route] | None = None) -> tuple[str, str, str | bytes]:
    """(status, content type, body) for an HTTP request line."""
    parts = request_line.split()
    if len(parts) < 2 or parts[0] != "GET":
        return "405 Method Not Allowed", "text/plain", "only GET\n"
    path = parts[1].split("?")[0]
    if path == "/metrics":
        return "200 OK", CONTENT_TYPE_PLAIN_0_0_4, render()
    if path == "/healthz":
        return ("200 OK", "text/plain", "ok\n") if healthy() else ("503 Service Unavailable", "text/plain", "stopping\n")
    if routes and path in routes:
        ctype, body = routes[path]()
        return "200 OK", ctype, body
    return "404 Not Found", "text/plain", "not found\n"


async def serve(host: str, port: int, render: Callable[[], str], healthy: Callable[[], bool],
                routes: Mapping[str, Route] | None = None) -> asyncio.AbstractServer:
    """A minimal HTTP/1.0 server for ``/metrics``, ``/healthz`` and ``routes`` on the running event loop."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = (await asyncio.wait_for(reader.readline(), timeout=5)).decode("latin-1")
            while (await asyncio.wait_for(reader.readline(), timeout=5)) not in (b"\r\n", b"\n", b""):
                pass  # headers are not needed
            try:
                status, ctype, body = respond(request, render, healthy, routes)
            except Exception:  # a metric that fails to render must not take the service down
                log.exception("metrics: rendering failed")
                status, ctype, body = "500 Internal Server Error", "text/plain", "error\n"
            data = body.encode() if isinstance(body, str) else body
            writer.write(f"HTTP/1.0 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {len(data)}\r\n"
                         f"Connection: close\r\n\r\n".encode() + data)
            await writer.drain()
        except (asyncio.TimeoutError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, host, port)
    log.info("metrics on http://%s:%d/metrics", host, port)
    return server
