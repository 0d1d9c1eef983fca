"""Prometheus metrics of a service: the text exposition format (0.0.4), served by the service's own event loop.

``GET /metrics`` returns
* ``anonstream_records_total{stage, instance, outcome}`` — records consumed, produced and dead-lettered (counter);
* ``anonstream_batch_seconds_sum`` / ``_count`` — time from poll to commit of each batch (summary), and
  ``anonstream_last_batch_timestamp_seconds``;
* ``anonstream_consumer_lag{topic, partition}`` — records between the committed position and the partition's end;
* ``anonstream_process_seconds`` — time the stage core took per batch (decode, validate, process, validate
  outputs), a histogram (``_bucket{le}``, ``_sum``, ``_count``; prometheus-client);
* ``anonstream_end_to_end_seconds`` — per sanitized document (the sink only): from when the document was
  appended to the documents topic (its Kafka timestamp) until the sink's produce of the sanitized document
  was acknowledged, a histogram. The time travels as the ``anonstream-ingested-at`` record header
  (``runtime/service.py``);
* ``anonstream_<stage>_<name>`` — the stage's own numbers (``Stage.metrics()``); a mapping becomes one series per
  key (label ``key``), and text values (model or release versions) one ``anonstream_<stage>_info`` series whose
  labels carry them.
``GET /healthz`` returns 200 while the service loop runs, 503 once it is stopping. A shell may serve more
paths on the same port (``routes``: the audit service's dashboard, ``runtime/dashboard.py``).
Every series carries the labels ``stage`` and ``instance``.

Metrics carry numbers, stage names, topic names and versions: never record content. Text values of
``Stage.metrics()`` are limited to ``MAX_INFO_CHARS`` characters of ``[A-Za-z0-9._:@/+-]`` (versions and hashes).
"""
from __future__ import annotations

import asyncio
import logging
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from prometheus_client import CollectorRegistry, Histogram, generate_latest

log = logging.getLogger(__name__)

MAX_INFO_CHARS = 80
_NAME_BAD = re.compile(r"[^a-zA-Z0-9_]")
_INFO_OK = re.compile(r"^[A-Za-z0-9._:@/+-]+$")


def metric_name(*parts: str) -> str:
    name = "_".join(_NAME_BAD.sub("_", p) for p in parts if p)
    return name if not name[:1].isdigit() else f"_{name}"


def _labels(labels: Mapping[str, Any]) -> str:
    if not labels:
        return ""
    body = ",".join(f'{metric_name(k)}="{_escape(str(v))}"' for k, v in labels.items())
    return "{" + body + "}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and value == value:
        return float(value)
    return None


def _fmt(value: float) -> str:
    return str(int(value)) if value.is_integer() else repr(value)


PROCESS_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
END_TO_END_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0)


@dataclass
class ServiceMetrics:
    """What the service shell counts; ``exposition`` renders it with the stage's own numbers."""

    stage: str
    instance: str
    records: Counter = field(default_factory=Counter)
    batch_seconds_sum: float = 0.0
    batch_count: int = 0
    last_batch_at: float | None = None
    lag: dict[tuple[str, int], int] = field(default_factory=dict)
    registry: CollectorRegistry = field(default_factory=CollectorRegistry, repr=False)

    def __post_init__(self) -> None:
        labels = ("stage", "instance")
        self.process_seconds = Histogram(
            "anonstream_process_seconds", "Time the stage core took per batch.", labels,
            registry=self.registry, buckets=PROCESS_BUCKETS).labels(self.stage, self.instance)
        self.end_to_end_seconds = Histogram(
            "anonstream_end_to_end_seconds", "Document appended to the documents topic until its sanitized "
            "version was acknowledged.", labels, registry=self.registry, buckets=END_TO_END_BUCKETS)
        if self.stage == "sink":  # the only stage that writes sanitized documents: a zero series from the start
            self.end_to_end_seconds.labels(self.stage, self.instance)

    def observe_batch(self, seconds: float, consumed: int, produced: int, dead_lettered: int) -> None:
        self.records.update(consumed=consumed, produced=produced, dead_lettered=dead_lettered)
        self.batch_seconds_sum += seconds
        self.batch_count += 1
        self.last_batch_at = time.time()

    def observe_process(self, seconds: float) -> None:
        self.process_seconds.observe(seconds)

    def observe_end_to_end(self, seconds: float) -> None:
        self.end_to_end_seconds.labels(self.stage, self.instance).observe(max(0.0, seconds))

    def exposition(self, stage_metrics: Mapping[str, Any] | None = None) -> str:
        base = {"stage": self.stage, "instance": self.instance}
        out: list[str] = []

        def family(name: str, kind: str, help_text: str, samples: list[tuple[dict, float]]) -> None:
            if not samples:
                return
            out.append(f"# HELP {name} {help_text}")
            out.append(f"# TYPE {name} {kind}")
            out.extend(f"{name}{_labels({**base, **labels})} {_fmt(value)}" for labels, value in samples)

        family("anonstream_records_total", "counter", "Records consumed, produced and dead-lettered.",
               [({"outcome": k}, float(self.records.get(k, 0))) for k in ("consumed", "produced", "dead_lettered")])
        out += ["# HELP anonstream_batch_seconds Time from poll to commit of a batch.",
                "# TYPE anonstream_batch_seconds summary"]
        out.append(f"anonstream_batch_seconds_sum{_labels(base)} {_fmt(round(self.batch_seconds_sum, 6))}")
        out.append(f"anonstream_batch_seconds_count{_labels(base)} {self.batch_count}")
        if self.last_batch_at is not None:
            family("anonstream_last_batch_timestamp_seconds", "gauge", "When the last batch was committed.",
                   [({}, round(self.last_batch_at, 3))])
        family("anonstream_consumer_lag", "gauge", "Records between the committed position and the partition end.",
               [({"topic": t, "partition": p}, float(n)) for (t, p), n in sorted(self.lag.items())])
        info: dict[str, str] = {}
        for key, value in sorted((stage_metrics or {}).items()):
            name = metric_name("anonstream", self.stage, key)
            number = _number(value)
            if number is not None:
                family(name, "gauge", f"Stage metric {key}.", [({}, number)])
            elif isinstance(value, Mapping):
                family(name, "gauge", f"Stage metric {key}, by key.",
                       [({"key": k}, n) for k, v in sorted(value.items()) if (n := _number(v)) is not None])
            elif isinstance(value, str) and len(value) <= MAX_INFO_CHARS and _INFO_OK.match(value):
                info[key] = value
        if info:
            family(metric_name("anonstream", self.stage, "info"), "gauge", "Stage versions.", [(info, 1.0)])
        return "\n".join(out) + "\n" + generate_latest(self.registry).decode()


Route = Callable[[], tuple[str, str | bytes]]  # () -> (content type, body)


def respond(request_line: str, render: Callable[[], str], healthy: Callable[[], bool],
            routes: Mapping[str, Route] | None = None) -> tuple[str, str, str | bytes]:
    """(status, content type, body) for an HTTP request line."""
    parts = request_line.split()
    if len(parts) < 2 or parts[0] != "GET":
        return "405 Method Not Allowed", "text/plain", "only GET\n"
    path = parts[1].split("?")[0]
    if path == "/metrics":
        return "200 OK", "text/plain; version=0.0.4; charset=utf-8", render()
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
