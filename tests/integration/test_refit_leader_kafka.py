"""Two refit services on the real broker, with the Redis and with the Redis Cluster (``redis_target``): both consume embedded chunks into the shared reservoir, only the
leader publishes mixture versions; after a `kill -9` of the leader the other takes over within the lease's TTL
(plus a third) and publishes the next versions; the leadership gauges say who leads."""
from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid

import numpy as np
import orjson
import pytest
from aiokafka import AIOKafkaProducer

from anonstream import topics
from anonstream.config import Settings
from anonstream.records import Chunk
from anonstream.runtime.kafka import create_topics
from anonstream.stores.redis_state import RedisModelRegistry
from test_audit_instances_kafka import _until as _wait

pytestmark = pytest.mark.integration

TTL_S = 3.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _gauge(port: int, name: str, label: str = "") -> float | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as response:
            text = response.read().decode()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(name + "{") and label in line:
            return float(line.rsplit(" ", 1)[1])
    return None


def _chunks(n: int, seed: int) -> list[tuple[bytes, bytes]]:
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(3, 8))
    out = []
    for i in range(n):
        x = centers[i % 3] + 0.15 * rng.normal(size=8)
        x /= np.linalg.norm(x)
        chunk = Chunk(f"d{seed}-{i}", 0, 1, "Some text.", 0, 1, entities=[],
                      embedding={"model": "m", "dim": 8, "vector": x.tolist()},
                      lineage={"ingest": "1", "pii": "1", "embed": "2"})
        out.append((chunk.doc_id.encode(), orjson.dumps(chunk.to_wire())))
    return out


async def _produce(settings: Settings, records) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=settings.bootstrap, acks="all")
    await producer.start()
    try:
        for key, value in records:
            await producer.send(topics.name(topics.CHUNKS_EMBEDDED, settings.topic_prefix), value, key=key)
        await producer.flush()
    finally:
        await producer.stop()


def test_two_refit_services_one_leader_and_a_takeover_after_kill_9(kafka_bootstrap, redis_target, redis_tenant):
    prefix, tenant = f"refit-{uuid.uuid4().hex[:8]}", redis_tenant
    settings = Settings(bootstrap=kafka_bootstrap, topic_prefix=prefix)
    asyncio.run(create_topics(settings))
    ports = [_free_port(), _free_port()]
    services = []
    for instance, port in enumerate(ports):
        env = {**os.environ, **redis_target.environment(), "ANONSTREAM_BOOTSTRAP": kafka_bootstrap,
               "ANONSTREAM_TOPIC_PREFIX": prefix, "ANONSTREAM_TENANT": tenant,
               "ANONSTREAM_INSTANCE": str(instance), "ANONSTREAM_METRICS_PORT": str(port),
               "ANONSTREAM_REFIT_INTERVAL_S": "2", "ANONSTREAM_REFIT_MIN_SAMPLES": "32", "ANONSTREAM_MIXTURE_K": "3",
               "ANONSTREAM_REFIT_LEASE_TTL_S": str(TTL_S)}
        services.append(subprocess.Popen([sys.executable, "-m", "anonstream.cli", "service", "refit"], env=env,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        if instance == 0:  # the first one leads: start the second once it does
            _wait(lambda: _gauge(ports[0], "anonstream_refit_leader") == 1, 90, "the first refit service leads")
    registry = RedisModelRegistry(redis_target.connect(), tenant, keep=1000)
    try:
        _wait(lambda: _gauge(ports[1], "anonstream_refit_leader") == 0, 90, "the second refit service stands by")
        asyncio.run(_produce(settings, _chunks(200, 1)))
        _wait(lambda: (registry.current_version() or 0) >= 2, 90, "the leader publishes")
        time.sleep(3)
        assert _gauge(ports[0], "anonstream_refit_published") >= 2
        assert _gauge(ports[1], "anonstream_refit_published") == 0  # it consumed, but did not publish
        consumed = [_gauge(port, "anonstream_records_total", 'outcome="consumed"') for port in ports]
        assert sum(consumed) == 200 and min(consumed) > 0, consumed
        assert _gauge(ports[0], "anonstream_refit_reservoir_seen") == 200  # one reservoir, fed by both
        before = registry.current_version()

        services[0].send_signal(signal.SIGKILL)
        services[0].wait()
        killed = time.monotonic()
        _wait(lambda: _gauge(ports[1], "anonstream_refit_leader") == 1, TTL_S + TTL_S / 3 + 10,
              "the standby takes over")
        took = time.monotonic() - killed
        # not before the lease expired: the leader renewed it every TTL/3, so at most TTL/3 before the kill
        assert took >= TTL_S * 2 / 3 - 0.5
        assert _gauge(ports[1], "anonstream_refit_leader_token") == 2
        asyncio.run(_produce(settings, _chunks(60, 2)))
        _wait(lambda: (registry.current_version() or 0) > before, 60, "the new leader publishes")
        _wait(lambda: (_gauge(ports[1], "anonstream_refit_published") or 0) >= 1, 30, "its gauge counts it")
    finally:
        for service in services:
            if service.poll() is None:
                service.send_signal(signal.SIGTERM)
                assert service.wait(timeout=30) == 0
