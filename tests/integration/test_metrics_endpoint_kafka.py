"""A service's Prometheus endpoint on the real broker: the ingest service, fed good and malformed documents,
reports what it consumed, produced and dead-lettered, its batch timings and its consumer lag; /healthz answers."""
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

import orjson
import pytest
from aiokafka import AIOKafkaProducer

from anonstream import topics
from anonstream.config import Settings
from anonstream.runtime.kafka import create_topics

pytestmark = pytest.mark.integration


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _produce(settings: Settings, values: list[bytes]) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=settings.bootstrap, acks="all")
    await producer.start()
    try:
        for i, value in enumerate(values):
            await producer.send_and_wait(topics.name(topics.DOCUMENTS, settings.topic_prefix), value,
                                         key=f"k{i}".encode())
    finally:
        await producer.stop()


def _scrape(port: int, path: str = "/metrics") -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, ""


def _value(text: str, name: str, **labels: str) -> float | None:
    for line in text.splitlines():
        if line.startswith(name + "{") and all(f'{k}="{v}"' in line for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return None


def test_ingest_service_exposes_its_numbers(kafka_bootstrap, redis_url):
    run = uuid.uuid4().hex[:8]
    port = _free_port()
    env = {**os.environ, "ANONSTREAM_BOOTSTRAP": kafka_bootstrap, "ANONSTREAM_REDIS_URL": redis_url,
           "ANONSTREAM_TOPIC_PREFIX": f"metrics-{run}", "ANONSTREAM_TENANT": f"metrics-{run}",
           "ANONSTREAM_METRICS_PORT": str(port)}
    settings = Settings(bootstrap=kafka_bootstrap, topic_prefix=f"metrics-{run}")
    asyncio.run(create_topics(settings))
    good = [orjson.dumps({"doc_id": f"d{i}", "text": f"Sentence one of {i}. Sentence two.", "metadata": {}})
            for i in range(5)]
    service = subprocess.Popen([sys.executable, "-m", "anonstream.cli", "service", "ingest"], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        asyncio.run(_produce(settings, good + [b"{not json"]))
        deadline, text = time.monotonic() + 90, ""
        while time.monotonic() < deadline:
            try:
                status, text = _scrape(port)
            except OSError:
                status = 0  # not listening yet
            if status == 200 and _value(text, "anonstream_records_total", outcome="consumed") == 6 \
                    and _value(text, "anonstream_consumer_lag") is not None:
                break
            time.sleep(0.5)
        assert _value(text, "anonstream_records_total", stage="ingest", outcome="consumed") == 6, text
        assert _value(text, "anonstream_records_total", outcome="dead_lettered") == 1
        assert _value(text, "anonstream_records_total", outcome="produced") >= 5  # one chunk or more per document
        assert _value(text, "anonstream_batch_seconds_count") >= 1
        assert all(v == 0 for line in text.splitlines() if line.startswith("anonstream_consumer_lag{")
                   for v in [float(line.rsplit(" ", 1)[1])])
        assert "Sentence" not in text
        assert _scrape(port, "/healthz")[0] == 200
    finally:
        service.send_signal(signal.SIGTERM)
        assert service.wait(timeout=30) == 0
