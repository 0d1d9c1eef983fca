"""The sink on the real broker and Redis: killed without warning mid-stream and restarted, it still
delivers every document exactly once to a read_committed consumer (transactional produce + offsets,
reassembly state in Redis)."""
from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid

import orjson
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from anonstream import topics
from anonstream.config import Settings
from anonstream.records import Chunk
from anonstream.runtime.kafka import create_topics

pytestmark = pytest.mark.integration

N_DOCS, N_CHUNKS = 40, 3


def _chunk(doc: int, index: int) -> bytes:
    chunk = Chunk(f"doc-{doc}", index, N_CHUNKS, f"Part {index} of document {doc}.\n", 0, 1, {"n": doc},
                  entities=[], cluster={"model_version": 1, "component": 0, "posterior": 1.0, "log_density": 0.0},
                  changes=[], lineage={"ingest": "1", "swap": "1"})
    return orjson.dumps(chunk.to_wire())


async def _produce(settings: Settings, chunks: list[tuple[int, int]]) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=settings.bootstrap, acks="all")
    await producer.start()
    try:
        name = topics.name(topics.CHUNKS_SANITIZED, settings.topic_prefix)
        for doc, index in chunks:
            await producer.send_and_wait(name, _chunk(doc, index), key=f"doc-{doc}".encode())
    finally:
        await producer.stop()


async def _read(settings: Settings, until_docs: int, timeout_s: float, linger_s: float) -> list[dict]:
    consumer = AIOKafkaConsumer(topics.name(topics.SANITIZED, settings.topic_prefix),
                                bootstrap_servers=settings.bootstrap, group_id=None,
                                auto_offset_reset="earliest", isolation_level="read_committed")
    await consumer.start()
    docs: list[dict] = []
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline and len({d["doc_id"] for d in docs}) < until_docs:
            for records in (await consumer.getmany(timeout_ms=500)).values():
                docs.extend(orjson.loads(r.value) for r in records)
        end = time.monotonic() + linger_s  # a late duplicate would show up now
        while time.monotonic() < end:
            for records in (await consumer.getmany(timeout_ms=500)).values():
                docs.extend(orjson.loads(r.value) for r in records)
    finally:
        await consumer.stop()
    return docs


def _start_sink(env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "anonstream_services.sink"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_sink_killed_and_restarted_emits_every_document_exactly_once(kafka_bootstrap, redis_url):
    run = uuid.uuid4().hex[:8]
    env = {**os.environ, "ANONSTREAM_BOOTSTRAP": kafka_bootstrap, "ANONSTREAM_REDIS_URL": redis_url,
           "ANONSTREAM_TOPIC_PREFIX": f"sink-{run}", "ANONSTREAM_TENANT": f"sink-{run}"}
    settings = Settings(bootstrap=kafka_bootstrap, topic_prefix=f"sink-{run}")
    asyncio.run(create_topics(settings))

    half = N_DOCS // 2
    sink = _start_sink(env)
    try:
        # every document's first two chunks, interleaved, then the last chunk of the first half:
        # at the kill, the second half waits in Redis and the first half is being emitted
        asyncio.run(_produce(settings, [(d, i) for i in range(N_CHUNKS - 1) for d in range(N_DOCS)]
                             + [(d, N_CHUNKS - 1) for d in range(half)]))
        first = asyncio.run(_read(settings, 5, timeout_s=60, linger_s=0))
        assert first, "the sink emitted nothing before the kill"
        sink.send_signal(signal.SIGKILL)  # no shutdown: state, transactions and offsets as they are
        sink.wait(timeout=10)
        asyncio.run(_produce(settings, [(d, N_CHUNKS - 1) for d in range(half, N_DOCS)]))
        sink = _start_sink(env)
        docs = asyncio.run(_read(settings, N_DOCS, timeout_s=120, linger_s=3))
    finally:
        sink.terminate()
        sink.wait(timeout=30)

    counts: dict[str, int] = {}
    for doc in docs:
        counts[doc["doc_id"]] = counts.get(doc["doc_id"], 0) + 1
    assert sorted(counts) == sorted(f"doc-{i}" for i in range(N_DOCS))
    assert {k: v for k, v in counts.items() if v != 1} == {}
    for doc in docs:
        n = doc["metadata"]["n"]
        assert doc["text"] == "".join(f"Part {i} of document {n}.\n" for i in range(N_CHUNKS))
