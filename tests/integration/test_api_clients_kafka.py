"""The REST API's /v1/documents and `anonstream produce` / `consume` on the real broker and Redis.

1. `anonstream serve` as its own process: POST /v1/documents puts a valid record (key doc_id) on the input
   topic; GET /v1/documents/{id} is 404 until a sanitized document with that id is on the sanitized topic,
   then returns it (indexed into Redis by the server).
2. (slow) The services ingest → sink as processes: `anonstream produce` 5 demo documents, `anonstream consume
   --count 5` reads their sanitized versions back, and the API serves the same documents.
"""
from __future__ import annotations

import asyncio
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import orjson
import pytest
import redis
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from anonstream import contracts, topics
from anonstream.config import Settings
from anonstream.runtime.kafka import create_topics

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample" / "tab-train-100.jsonl"
TOKEN = secrets.token_urlsafe(24)
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture  # per test: its own topics, so one test's records are not the other's input
def env(kafka_bootstrap, redis_url):
    run_id = uuid.uuid4().hex[:8]
    environment = {**os.environ, "ANONSTREAM_BOOTSTRAP": kafka_bootstrap, "ANONSTREAM_REDIS_URL": redis_url,
                   "ANONSTREAM_TOPIC_PREFIX": f"it-api-{run_id}", "ANONSTREAM_TENANT": f"it-api-{run_id}",
                   "ANONSTREAM_API_TOKEN": TOKEN, "ANONSTREAM_PSEUDONYM_KEY": secrets.token_hex(32),
                   "ANONSTREAM_API_PORT": str(_free_port())}
    asyncio.run(create_topics(_settings(environment)))
    yield environment
    client = redis.Redis.from_url(redis_url)
    keys = list(client.scan_iter(f"anonstream:{environment['ANONSTREAM_TENANT']}:*"))
    if keys:
        client.delete(*keys)
    client.close()


def _settings(env) -> Settings:
    return Settings(bootstrap=env["ANONSTREAM_BOOTSTRAP"], topic_prefix=env["ANONSTREAM_TOPIC_PREFIX"])


@pytest.fixture  # per test: its own topics, so one test's records are not the other's input
def api(env, tmp_path_factory):
    log_path = tmp_path_factory.mktemp("api") / "serve.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "anonstream.cli", "serve"], env=env, stdout=log,
                                   stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{env['ANONSTREAM_API_PORT']}"
    deadline = time.monotonic() + 120
    while True:
        assert process.poll() is None, f"anonstream serve exited: {log_path.read_text()[-2000:]}"
        try:
            if httpx.get(f"{base}/openapi.json", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, "anonstream serve did not come up in 120 s"
        time.sleep(0.5)
    yield base, log_path
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


async def _read(settings, topic, n, timeout_s=30.0):
    consumer = AIOKafkaConsumer(topics.name(topic, settings.topic_prefix), bootstrap_servers=settings.bootstrap,
                                auto_offset_reset="earliest", group_id=f"{settings.topic_prefix}.test-{uuid.uuid4().hex[:6]}")
    await consumer.start()
    out = []
    try:
        deadline = time.monotonic() + timeout_s
        while len(out) < n and time.monotonic() < deadline:
            for records in (await consumer.getmany(timeout_ms=500)).values():
                out.extend(records)
    finally:
        await consumer.stop()
    return out


def _wait_for_result(base, doc_id, timeout_s):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        response = httpx.get(f"{base}/v1/documents/{doc_id}", headers=AUTH, timeout=5)
        if response.status_code == 200:
            return response.json()
        assert response.status_code == 404
        time.sleep(0.5)
    raise AssertionError(f"no sanitized document {doc_id} after {timeout_s} s")


def test_documents_round_trip_through_broker_and_redis(api, env):
    base, log_path = api
    settings = _settings(env)
    assert httpx.post(f"{base}/v1/documents", json={"text": "x"}, timeout=5).status_code == 401
    text = "Mr Cengiz Polat wrote to jane@example.org on 3 May 2001."
    response = httpx.post(f"{base}/v1/documents", headers=AUTH, timeout=30,
                          json={"doc_id": "api-doc-1", "text": text, "metadata": {"source": "test"}})
    assert response.status_code == 202 and response.json()["doc_id"] == "api-doc-1"
    records = asyncio.run(_read(settings, topics.DOCUMENTS, 1))
    assert [r.key for r in records] == [b"api-doc-1"]
    value = orjson.loads(records[0].value)
    contracts.validate(topics.DOCUMENTS.schema, value)
    assert value == {"doc_id": "api-doc-1", "text": text, "metadata": {"source": "test"}}

    assert httpx.get(f"{base}/v1/documents/api-doc-1", headers=AUTH, timeout=5).status_code == 404
    sanitized = {"doc_id": "api-doc-1", "text": "[PERSON_1] wrote to [EMAIL_1] on 3 May 2001.",
                 "metadata": {"source": "test"}, "chunk_count": 1, "lineage": {"ingest": "1", "sink": "1"},
                 "entity_counts": {"PERSON": 1, "CODE": 1}}
    contracts.validate(topics.SANITIZED.schema, sanitized)

    async def write_sanitized():
        producer = AIOKafkaProducer(bootstrap_servers=settings.bootstrap, acks="all")
        await producer.start()
        try:
            topic = topics.name(topics.SANITIZED, settings.topic_prefix)
            await producer.send_and_wait(topic, b"not a document", key=b"junk")
            await producer.send_and_wait(topic, orjson.dumps(sanitized), key=b"api-doc-1|f")
        finally:
            await producer.stop()

    asyncio.run(write_sanitized())
    assert _wait_for_result(base, "api-doc-1", 60) == sanitized
    assert "Cengiz" not in log_path.read_text()


@pytest.mark.slow
def test_produce_consume_and_api_against_the_running_services(api, env, tmp_path):
    base, _ = api
    stages = ("ingest", "pii", "embed", "cluster", "swap", "sink")
    logs = tmp_path / "services"
    logs.mkdir()
    processes = []
    for stage in stages:
        with (logs / f"{stage}.log").open("wb") as log:
            processes.append(subprocess.Popen([sys.executable, "-m", "anonstream.cli", "service", stage], env=env,
                                              stdout=log, stderr=subprocess.STDOUT))
    try:
        docs_path = tmp_path / "docs.jsonl"
        lines = SAMPLE.read_bytes().splitlines()[:5]
        docs_path.write_bytes(b"\n".join(lines) + b"\n")
        produced = subprocess.run([sys.executable, "-m", "anonstream.cli", "produce", "--input", str(docs_path)],
                                  env=env, capture_output=True, text=True, timeout=120)
        assert produced.returncode == 0, produced.stderr[-2000:]
        out_path = tmp_path / "out.jsonl"
        consumed = subprocess.run([sys.executable, "-m", "anonstream.cli", "consume", "--output", str(out_path),
                                   "--count", "5", "--timeout", "400"], env=env, capture_output=True, text=True,
                                  timeout=600)
        assert consumed.returncode == 0, consumed.stderr[-2000:] + "".join(
            (logs / f"{s}.log").read_text()[-1500:] for s in stages)
        got = [orjson.loads(line) for line in out_path.read_bytes().splitlines()]
        inputs = {d["doc_id"]: d for d in map(orjson.loads, lines)}
        assert sorted(d["doc_id"] for d in got) == sorted(inputs)
        for document in got:
            contracts.validate(topics.SANITIZED.schema, document)
            assert document["metadata"] == inputs[document["doc_id"]]["metadata"]
            assert document["text"] != inputs[document["doc_id"]]["text"]
            assert _wait_for_result(base, document["doc_id"], 60) == document
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
