"""Two audit services on the real broker, with the Redis and with the Redis Cluster (``redis_target``): both consume
their partitions of the swap log, both report the merged counts and risk, one writes the snapshots; after a
`kill -9` of that one the other writes them."""
from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

from anonstream import topics
from anonstream.config import Settings
from anonstream.runtime.kafka import create_topics

from test_audit_redis import RECORDS, VERSION, log_record
from test_audit_service_kafka import _free_port, _produce, _scrape, _snapshots, _value

pytestmark = pytest.mark.integration

TTL_S = 3.0


def _until(condition, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.25)
    raise AssertionError(f"not within {timeout_s} s: {what}")


def _gauge(port, name, key=None):
    text = _scrape(port)
    return _value(text, name, key) if text else None


def test_two_audit_services_merge_and_one_writes_snapshots(kafka_bootstrap, redis_target, redis_tenant):
    prefix = f"audit2-{uuid.uuid4().hex[:8]}"
    settings = Settings(bootstrap=kafka_bootstrap, topic_prefix=prefix)
    asyncio.run(create_topics(settings))
    records = RECORDS + [log_record(f"G{i}", 0, f"g{i}") for i in range(24)]  # enough documents for 4 partitions
    ports = [_free_port(), _free_port()]
    services = []
    for instance, port in enumerate(ports):
        env = {**os.environ, **redis_target.environment(), "ANONSTREAM_BOOTSTRAP": kafka_bootstrap,
               "ANONSTREAM_TOPIC_PREFIX": prefix, "ANONSTREAM_TENANT": redis_tenant,
               "ANONSTREAM_INSTANCE": str(instance), "ANONSTREAM_METRICS_PORT": str(port),
               "ANONSTREAM_AUDIT_SNAPSHOT_S": "1", "ANONSTREAM_AUDIT_UTILITY": "0",
               "ANONSTREAM_AUDIT_LEASE_TTL_S": str(TTL_S)}
        services.append(subprocess.Popen([sys.executable, "-m", "anonstream.cli", "service", "audit"], env=env,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        if instance == 0:
            _until(lambda: _gauge(ports[0], "anonstream_audit_snapshot_writer") == 1, 90, "the first writes")
    try:
        _until(lambda: _gauge(ports[1], "anonstream_audit_snapshot_writer") == 0, 90, "the second stands by")
        asyncio.run(_produce(settings, topics.SWAP_LOG, records))
        for port in ports:  # each instance's gauges show every record, whichever instance consumed it
            _until(lambda: _gauge(port, "anonstream_audit_risk_n", VERSION) == len(records), 60,
                   f"merged risk tables on :{port}")
        texts = [_scrape(port) for port in ports]
        consumed = [sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                        if line.startswith("anonstream_records_total{") and 'outcome="consumed"' in line)
                    for text in texts]
        assert sum(consumed) == len(records) and min(consumed) > 0, consumed

        services[0].send_signal(signal.SIGKILL)
        services[0].wait()
        _until(lambda: _gauge(ports[1], "anonstream_audit_snapshot_writer") == 1, TTL_S + TTL_S / 3 + 10,
               "the other instance takes the snapshot lease")
        written = time.time()
        time.sleep(2.5)
        snapshots = asyncio.run(_snapshots(settings))
        assert any(s["emitted_at"] >= written for s in snapshots)  # the new writer's
        assert all(s["risk"][VERSION]["all_time"]["n"] == len(records) for s in snapshots
                   if VERSION in s["risk"] and s["emitted_at"] >= written)
    finally:
        for service in services:
            if service.poll() is None:
                service.send_signal(signal.SIGTERM)
                assert service.wait(timeout=30) == 0
