"""Exactly-once on the real broker (ANONSTREAM_PROCESSING_GUARANTEE=exactly-once, runtime/transactions.py), on the
ingest stage (documents -> chunks: no model to load, the same service shell as every stage):

* a service that dies after its batch's outputs reached the broker but before its transactions committed (the test
  hook ANONSTREAM_TEST_CRASH_BEFORE_COMMIT exits like kill -9 at that point), restarted: a read_committed consumer
  sees every chunk exactly once, while a read_uncommitted one sees the dead attempt's records too;
* two instances under load, one killed with SIGKILL and restarted: its partitions move to the other instance and
  back (its open transactions aborted by the new owner's fencing), still every chunk exactly once;
* the swap stage, whose outputs of claims wait in its Redis outbox until acknowledged: a service that dies after its
  transactions committed and before the acknowledgement (ANONSTREAM_TEST_CRASH_AFTER_COMMIT), restarted, and a second
  instance beside it: every sanitized chunk exactly once (the outbox is resolved by the committed offsets, not
  re-emitted), the chunks left waiting released by the wait bound in transactions too.
"""
from __future__ import annotations

import asyncio
import signal
import time
from collections import Counter

import orjson
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from anonstream import topics
from anonstream.config import Settings
from anonstream.records import Document
from anonstream.runtime import launch
from anonstream.runtime.kafka import create_topics
from anonstream.runtime.transactions import CRASH_AFTER_COMMIT_ENV, CRASH_BEFORE_COMMIT_ENV
from anonstream.stages.ingest import IngestStage

pytestmark = pytest.mark.integration


def _document(n: int, tag: str) -> dict:
    text = " ".join(f"Sentence {i} of document {n} says something about item {i * n}." for i in range(20))
    return {"doc_id": f"{tag}-{n}", "text": text, "metadata": {"n": n}}


def _expected(docs: list[dict]) -> set[tuple[str, int]]:
    stage = IngestStage()
    return {(doc["doc_id"], c.chunk_index) for doc in docs for c in stage.chunks(Document.from_wire(doc))}


async def _produce(settings: Settings, docs: list[dict], rate_per_s: float | None = None) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=settings.bootstrap, acks="all")
    await producer.start()
    try:
        name = topics.name(topics.DOCUMENTS, settings.topic_prefix)
        for doc in docs:
            await producer.send(name, orjson.dumps(doc), key=doc["doc_id"].encode())
            if rate_per_s:
                await asyncio.sleep(1 / rate_per_s)
        await producer.flush()
    finally:
        await producer.stop()


async def _read(settings: Settings, isolation: str, until: int, timeout_s: float, linger_s: float,
                topic=topics.CHUNKS) -> Counter:
    consumer = AIOKafkaConsumer(topics.name(topic, settings.topic_prefix),
                                bootstrap_servers=settings.bootstrap, group_id=None,
                                auto_offset_reset="earliest", isolation_level=isolation)
    await consumer.start()
    seen: Counter = Counter()

    async def poll() -> None:
        for records in (await consumer.getmany(timeout_ms=500)).values():
            for record in records:
                chunk = orjson.loads(record.value)
                seen[(chunk["doc_id"], chunk["chunk_index"])] += 1

    try:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and sum(seen.values()) < until:
            await poll()
        end = time.monotonic() + linger_s  # a late duplicate would show up now
        while time.monotonic() < end:
            await poll()
    finally:
        await consumer.stop()
    return seen


def _wait_consuming(log_path, timeout_s: float = 60, stage: str = "ingest") -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if log_path.exists() and launch.is_consuming(log_path.read_text(errors="replace"), stage):
            return
        time.sleep(0.2)
    raise AssertionError(f"{stage} did not start: {log_path.read_text(errors='replace')[-2000:]}")


def _env(kafka_bootstrap: str, redis_url: str, tag: str) -> tuple[dict, Settings]:
    env = launch.service_env(kafka_bootstrap, redis_url, tag,
                             {"ANONSTREAM_PROCESSING_GUARANTEE": "exactly-once", "ANONSTREAM_LOG_LEVEL": "INFO"})
    env.pop(CRASH_BEFORE_COMMIT_ENV, None)
    settings = Settings(bootstrap=kafka_bootstrap, topic_prefix=env["ANONSTREAM_TOPIC_PREFIX"])
    asyncio.run(create_topics(settings))
    return env, settings


def test_crash_between_produce_and_commit_leaves_no_duplicate_for_read_committed(kafka_bootstrap, redis_url,
                                                                                   tmp_path):
    env, settings = _env(kafka_bootstrap, redis_url, "eos-crash")
    docs = [_document(n, "crash") for n in range(300)]
    expected = _expected(docs)
    asyncio.run(_produce(settings, docs))  # all waiting before the service starts: full batches of 100
    log_path = tmp_path / "ingest.log"
    crashing = launch.start_service("ingest", {**env, CRASH_BEFORE_COMMIT_ENV: "2"}, log_path)
    try:
        assert crashing.wait(timeout=120) == 137, log_path.read_text(errors="replace")[-2000:]
    finally:
        if crashing.poll() is None:
            crashing.kill()
    assert "exiting before the commit" in log_path.read_text(errors="replace")
    restarted = launch.start_service("ingest", env, log_path)
    try:
        committed = asyncio.run(_read(settings, "read_committed", len(expected), timeout_s=120, linger_s=3))
    finally:
        launch.stop_services([restarted])
    assert set(committed) == expected
    assert {k: n for k, n in committed.items() if n != 1} == {}
    uncommitted = asyncio.run(_read(settings, "read_uncommitted", len(expected) + 1, timeout_s=10, linger_s=0))
    # the dead attempt's outputs are in the log, aborted: the test did crash between produce and commit
    assert sum(uncommitted.values()) > len(expected)


def test_two_instances_one_killed_and_restarted_every_chunk_once(kafka_bootstrap, redis_url, tmp_path):
    env, settings = _env(kafka_bootstrap, redis_url, "eos-two")
    docs = [_document(n, "two") for n in range(900)]
    expected = _expected(docs)
    logs = [tmp_path / "ingest-0.log", tmp_path / "ingest-1.log"]
    processes = [launch.start_service("ingest", env, logs[i], instance=i) for i in range(2)]
    try:
        for log_path in logs:
            _wait_consuming(log_path)

        async def load_and_kill() -> None:
            producing = asyncio.create_task(_produce(settings, docs, rate_per_s=60))  # about 15 s of load
            await asyncio.sleep(5)
            processes[0].send_signal(signal.SIGKILL)  # mid-stream: batches in flight, transactions open
            processes[0].wait(timeout=10)
            await asyncio.sleep(2)
            processes[0] = launch.start_service("ingest", env, logs[0], instance=0)
            await producing

        asyncio.run(load_and_kill())
        # the killed member's partitions wait for its session to expire (30 s), then move
        committed = asyncio.run(_read(settings, "read_committed", len(expected), timeout_s=150, linger_s=3))
        assert all(p.poll() is None for p in processes), [log.read_text(errors="replace")[-2000:] for log in logs]
    finally:
        launch.stop_services(processes)
    assert set(committed) == expected
    assert {k: n for k, n in committed.items() if n != 1} == {}


ORGS = ["Siemens", "ARM", "Bosch", "Nokia", "Philips", "Ericsson", "Airbus", "Volvo", "Lego", "Maersk"]
PLACES = ["Texas", "Denmark", "Chile", "Ohio", "Norway", "Peru", "Kenya", "Japan", "Spain", "Iceland"]


def _clustered_chunks(n: int) -> list[dict]:
    """Clustered chunks of ``n`` documents that pair with each other in the swap stage (one pool, distinct values)."""
    from anonstream.swap.testing import make_chunk

    out = []
    for i in range(n):
        chunk = make_chunk(f"swap-{i}", 0, f"{{ORG:{ORGS[i % 10]}{i}}} opened an office in "
                                            f"{{LOC/GPE:{PLACES[(i * 3) % 10]}}} in {{DATETIME/DATE:May {1950 + i}}}.")
        wire = chunk.to_wire()
        wire["embedding"] = {"model": "test", "dim": 2, "vector": [0.6, 0.8]}
        out.append(wire)
    return out


async def _produce_chunks(settings: Settings, chunks: list[dict]) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=settings.bootstrap, acks="all")
    await producer.start()
    try:
        name = topics.name(topics.CHUNKS_CLUSTERED, settings.topic_prefix)
        for chunk in chunks:
            await producer.send(name, orjson.dumps(chunk), key=f"{chunk['doc_id']}|0".encode())
        await producer.flush()
    finally:
        await producer.stop()


def test_swap_outbox_after_a_crash_between_commit_and_ack_is_not_emitted_again(kafka_bootstrap, redis_url,
                                                                                 tmp_path):
    """Before the outbox was resolved by the committed offsets, the restarted instance re-emitted every output of the
    dead one's last batch (committed already): each of them twice at a read_committed consumer."""
    env, settings = _env(kafka_bootstrap, redis_url, "eos-swap")
    chunks = _clustered_chunks(80)
    expected = {(c["doc_id"], 0) for c in chunks}
    asyncio.run(_produce_chunks(settings, chunks[:60]))  # all there before the service starts: one batch
    logs = [tmp_path / "swap-0.log", tmp_path / "swap-1.log"]
    crashing = launch.start_service("swap", {**env, CRASH_AFTER_COMMIT_ENV: "1"}, logs[0], instance=0)
    try:
        assert crashing.wait(timeout=120) == 137, logs[0].read_text(errors="replace")[-2000:]
    finally:
        if crashing.poll() is None:
            crashing.kill()
    assert "exiting after the commit" in logs[0].read_text(errors="replace")
    processes = [launch.start_service("swap", env, logs[i], instance=i) for i in range(2)]
    try:
        for log_path in logs:
            _wait_consuming(log_path, stage="swap")
        asyncio.run(_produce_chunks(settings, chunks[60:]))  # new input: the instances' first batches
        # paired chunks at once; those left waiting after the wait bound (30 s)
        committed = asyncio.run(_read(settings, "read_committed", len(expected), timeout_s=150, linger_s=5,
                                      topic=topics.CHUNKS_SANITIZED))
        assert all(p.poll() is None for p in processes), [log.read_text(errors="replace")[-2000:] for log in logs]
    finally:
        launch.stop_services(processes)
    assert set(committed) == expected
    assert {k: n for k, n in committed.items() if n != 1} == {}


def test_stable_offset_fetch_reads_a_transactions_offsets_once_it_committed(kafka_bootstrap):
    """OffsetFetch v7 with require_stable on the real broker: a transaction's offset and metadata are read as
    committed, never the offset from before it (runtime/stable_offsets.py), and a partition never committed is
    absent."""
    from aiokafka import TopicPartition

    from anonstream.runtime.stable_offsets import fetch_stable_offsets

    topic, group = f"stable-{time.monotonic_ns()}", f"stable-group-{time.monotonic_ns()}"

    async def run():
        producer = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap, transactional_id=f"{group}-txn")
        consumer = AIOKafkaConsumer(bootstrap_servers=kafka_bootstrap, group_id=group, enable_auto_commit=False)
        await producer.start()
        await consumer.start()
        try:
            tps = [TopicPartition(topic, 0), TopicPartition(topic, 1)]
            await consumer._coordinator.ensure_coordinator_known()
            assert await fetch_stable_offsets(consumer._coordinator, tps) == {}
            for offset, metadata in ((5, ""), (9, "k1")):
                async with producer.transaction():
                    await producer.send_and_wait(topic, b"x", partition=0)
                    await producer.send_offsets_to_transaction({tps[0]: (offset, metadata)}, group)
                # read right after each commit: the coordinator answers only once the offsets are applied
                assert await fetch_stable_offsets(consumer._coordinator, tps) == {tps[0]: (offset, metadata)}
        finally:
            await consumer.stop()
            await producer.stop()

    asyncio.run(run())
