"""Broker failover on a real two-node Kafka cluster (deploy/kafka-local.sh start 2, private ports): every topic
has two replicas; the broker-only node is killed without warning while the ingest service is working.
Partition leadership moves to the surviving node, and every document still comes out, all of its chunks, each
chunk at least once (at-least-once; duplicates, if any, carry the same idempotency key)."""
from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import orjson
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from anonstream import topics
from anonstream.config import Settings
from anonstream.runtime.kafka import create_topics

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
N_DOCS = 60


def _free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


@pytest.fixture
def two_brokers(tmp_path, kafka_bootstrap):  # kafka_bootstrap: only run where the test broker runs too
    port1, controller, port2 = _free_ports(3)
    env = {**os.environ, "ANONSTREAM_KAFKA_PORT": str(port1), "ANONSTREAM_KAFKA_CONTROLLER_PORT": str(controller),
           "ANONSTREAM_KAFKA_PORT2": str(port2), "ANONSTREAM_RUN_DIR": str(tmp_path / "run"),
           "ANONSTREAM_PARTITIONS": "4"}
    script = ROOT / "deploy" / "kafka-local.sh"
    subprocess.run(["bash", str(script), "start", "2"], env=env, check=True, capture_output=True, timeout=240)
    try:
        yield f"127.0.0.1:{port1},127.0.0.1:{port2}", tmp_path / "run" / "kafka" / "node2.pid"
    finally:
        subprocess.run(["bash", str(script), "stop"], env=env, capture_output=True, timeout=120)


def _document(i: int) -> bytes:
    text = "\n".join(f"Sentence {k} of document {i} is here." for k in range(6))
    return orjson.dumps({"doc_id": f"doc-{i}", "text": text, "metadata": {"n": i}})


async def _produce(bootstrap: str, prefix: str, docs: range) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True,
                                request_timeout_ms=60000)
    await producer.start()
    try:
        for i in docs:
            await producer.send_and_wait(topics.name(topics.DOCUMENTS, prefix), _document(i), key=f"doc-{i}".encode())
    finally:
        await producer.stop()


def _complete(chunks: list[dict]) -> set[str]:
    """Documents all of whose chunks were read."""
    seen: dict[str, set[int]] = {}
    counts: dict[str, int] = {}
    for c in chunks:
        seen.setdefault(c["doc_id"], set()).add(c["chunk_index"])
        counts[c["doc_id"]] = c["chunk_count"]
    return {d for d, idx in seen.items() if idx == set(range(counts[d]))}


async def _read_chunks(bootstrap: str, prefix: str, docs: int, timeout_s: float) -> list[dict]:
    """Chunks on the chunks topic until ``docs`` documents are complete (or the timeout)."""
    consumer = AIOKafkaConsumer(topics.name(topics.CHUNKS, prefix), bootstrap_servers=bootstrap, group_id=None,
                                auto_offset_reset="earliest")
    await consumer.start()
    chunks: list[dict] = []
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline and len(_complete(chunks)) < docs:
            for records in (await consumer.getmany(timeout_ms=500)).values():
                chunks.extend(orjson.loads(r.value) for r in records)
    finally:
        await consumer.stop()
    return chunks


def test_ingest_survives_the_loss_of_a_broker(two_brokers, redis_url, tmp_path):
    bootstrap, node2_pid = two_brokers
    prefix = f"failover-{uuid.uuid4().hex[:8]}"
    settings = Settings(bootstrap=bootstrap, topic_prefix=prefix, replication=2)
    asyncio.run(create_topics(settings))
    env = {**os.environ, "ANONSTREAM_BOOTSTRAP": bootstrap, "ANONSTREAM_REDIS_URL": redis_url,
           "ANONSTREAM_TOPIC_PREFIX": prefix, "ANONSTREAM_TENANT": prefix, "ANONSTREAM_REPLICATION": "2"}
    log_path = tmp_path / "ingest.log"
    with log_path.open("wb") as log_file:
        service = subprocess.Popen([sys.executable, "-m", "anonstream.cli", "service", "ingest"], env=env,
                                   stdout=log_file, stderr=subprocess.STDOUT)
        try:
            asyncio.run(_produce(bootstrap, prefix, range(N_DOCS // 2)))
            assert asyncio.run(_read_chunks(bootstrap, prefix, docs=1, timeout_s=90)), log_path.read_text()[-3000:]
            os.kill(int(node2_pid.read_text().strip()), signal.SIGKILL)  # the broker-only node, no warning
            asyncio.run(_produce(bootstrap, prefix, range(N_DOCS // 2, N_DOCS)))
            chunks = asyncio.run(_read_chunks(bootstrap, prefix, docs=N_DOCS, timeout_s=180))
        finally:
            service.send_signal(signal.SIGTERM)
            service.wait(timeout=60)
    assert _complete(chunks) == {f"doc-{i}" for i in range(N_DOCS)}, log_path.read_text()[-3000:]
    assert all(0 <= c["chunk_index"] < c["chunk_count"] for c in chunks)
