"""The audit service on the real broker and Redis: as swap-log records and sanitized chunks flow in, its
Prometheus gauges move (n, s1/n, theta, alpha, DR over all time and over the window, released classes by
size, DU, the attacker's accuracy), its snapshots on the audit topic carry the DR and k alerts, and neither
carries text."""
from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
import uuid

import numpy as np
import orjson
import pytest
import redis
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from anonstream import topics
from anonstream.config import Settings
from anonstream.embedding import Embedder
from anonstream.mixture.model import SphericalMixture
from anonstream.runtime.kafka import create_topics
from anonstream.stores.redis_state import RedisModelRegistry

from test_audit_redis import RECORDS, VERSION

pytestmark = pytest.mark.integration

BEFORE = ["Acme Holdings reported revenue growth in Denver.", "Acme Holdings opened a plant near Denver."]
AFTER = ["Zeta Partners reported revenue growth in Denver.", "Zeta Partners opened a plant near Denver."]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _scrape(port: int) -> str:
    try:
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as response:
            return response.read().decode()
    except OSError:
        return ""


def _value(text: str, name: str, key: str | None = None) -> float | None:
    for line in text.splitlines():
        if line.startswith(name + "{") and (key is None or f'key="{key}"' in line):
            return float(line.rsplit(" ", 1)[1])
    return None


def _wait(port: int, ready, what: str, timeout_s: float = 120) -> str:
    deadline, text = time.monotonic() + timeout_s, ""
    while time.monotonic() < deadline:
        text = _scrape(port)
        if text and ready(text):
            return text
        time.sleep(0.5)
    raise AssertionError(f"audit gauges never showed {what}:\n{text}")


async def _produce(settings: Settings, topic, records: list[dict]) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=settings.bootstrap, acks="all")
    await producer.start()
    try:
        for r in records:
            await producer.send_and_wait(topics.name(topic, settings.topic_prefix), orjson.dumps(r),
                                         key=r["doc_id"].encode())
    finally:
        await producer.stop()


async def _snapshots(settings: Settings) -> list[dict]:
    consumer = AIOKafkaConsumer(topics.name(topics.AUDIT_METRICS, settings.topic_prefix),
                                bootstrap_servers=settings.bootstrap, auto_offset_reset="earliest",
                                group_id=f"{settings.topic_prefix}.test-reader")
    await consumer.start()
    try:
        batches = await consumer.getmany(timeout_ms=5000)
        return [orjson.loads(m.value) for messages in batches.values() for m in messages]
    finally:
        await consumer.stop()


def _changed_chunks(model: SphericalMixture, mv: int, X: np.ndarray) -> tuple[list[dict], list[dict]]:
    """Two sanitized chunks whose ORG was swapped (cluster fields from their embedded before text), and
    their swap-log records with the old values."""
    labels, posterior, logd = model.assign(X)
    chunks, logs = [], []
    for i, (before, after) in enumerate(zip(BEFORE, AFTER)):
        release = {"schema": "release.v1", "name": "it", "version": VERSION}
        chunks.append({
            "doc_id": f"du{i}", "chunk_index": 0, "chunk_count": 1, "text": after, "doc_start": 0,
            "sentence_count": 1, "metadata": {"ticker": "ACME"}, "lineage": {"swap": "1"}, "entities": [],
            "cluster": {"model_version": mv, "component": int(labels[i]), "posterior": float(posterior[i]),
                        "log_density": float(logd[i])},
            "changes": [{"start": 0, "end": 13, "operator": "swap"}], "release": release})
        logs.append({
            "schema": "swap-log.v1", "release": release, "doc_id": f"du{i}", "chunk_index": 0,
            "chunk_key": f"du{i}#0", "pool": f"v{mv}:c{int(labels[i])}", "action": "swapped", "reason": "selected",
            "rare": False, "seen_count": 1, "tuple_digest": None, "pair_id": "p", "partner": None,
            "categories": ["ORG"], "tuple_before": {}, "tuple_after": {},
            "changes": [{"start": 0, "end": 13, "category": "ORG", "operator": "swap", "old": "Acme Holdings",
                         "new": "Zeta Partners"}], "released_at": 1.0})
    return chunks, logs


def test_audit_service_gauges_move_and_alerts_reach_the_audit_topic(kafka_bootstrap, redis_url, tmp_path):
    run = uuid.uuid4().hex[:8]
    port = _free_port()
    train = tmp_path / "train.jsonl"
    train.write_bytes(b"\n".join(orjson.dumps({"doc_id": f"t{i}", "text": text, "metadata": {"ticker": label}})
                                 for i, (text, label) in enumerate([
                                     ("Acme Holdings sells pumps.\nAcme Holdings grew.", "ACME"),
                                     ("Zeta Partners sells valves.\nZeta Partners grew.", "ZETA")])))
    env = {**os.environ, "ANONSTREAM_BOOTSTRAP": kafka_bootstrap, "ANONSTREAM_REDIS_URL": redis_url,
           "ANONSTREAM_TOPIC_PREFIX": f"audit-{run}", "ANONSTREAM_TENANT": f"audit-{run}",
           "ANONSTREAM_METRICS_PORT": str(port), "ANONSTREAM_AUDIT_SNAPSHOT_S": "1",
           "ANONSTREAM_AUDIT_MAX_DR": "0.0", "ANONSTREAM_AUDIT_MIN_K": "2",
           "ANONSTREAM_AUDIT_ATTACK_TRAIN": str(train), "ANONSTREAM_AUDIT_UTILITY": "1"}  # DU on every changed chunk
    settings = Settings(bootstrap=kafka_bootstrap, topic_prefix=f"audit-{run}")
    asyncio.run(create_topics(settings))
    X = Embedder().encode(BEFORE)
    model = SphericalMixture("pkb", mu=X, rho=np.array([0.5, 0.5]), pi=np.array([0.5, 0.5]), n_train=10,
                             train_loglik=0.0, created_at=0.0)
    client = redis.Redis.from_url(redis_url)
    mv = RedisModelRegistry(client, f"audit-{run}").publish(model.to_bytes(), {})
    chunks, logs = _changed_chunks(model, mv, X)
    service = subprocess.Popen([sys.executable, "-m", "anonstream.cli", "service", "audit"], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        asyncio.run(_produce(settings, topics.SWAP_LOG, RECORDS[:5]))          # A x3, B x2: no sample uniques
        first = _wait(port, lambda t: _value(t, "anonstream_audit_risk_n", VERSION) == 5, "n = 5")
        assert _value(first, "anonstream_audit_risk_window_n", VERSION) == 5
        assert _value(first, "anonstream_audit_risk_dr", VERSION) is None     # s1 = 0: DR undefined
        assert _value(first, "anonstream_audit_risk_k_classes", f"{VERSION}|3-4") == 1   # the A class

        asyncio.run(_produce(settings, topics.SWAP_LOG, RECORDS[5:] + logs))
        asyncio.run(_produce(settings, topics.CHUNKS_SANITIZED, chunks))
        text = _wait(port, lambda t: _value(t, "anonstream_audit_risk_n", VERSION) == 9
                     and _value(t, "anonstream_audit_risk_du", VERSION) is not None
                     and _value(t, "anonstream_audit_attack_chunks") == 2, "n = 9, DU and attack accuracy")
        assert _value(text, "anonstream_audit_risk_s1_over_n", VERSION) == pytest.approx(4 / 9)
        for name in ("risk_dr", "risk_window_dr", "risk_theta", "risk_alpha", "risk_min_k"):
            assert _value(text, f"anonstream_audit_{name}", VERSION) is not None, name
        assert _value(text, "anonstream_audit_risk_du_changed_chunks", VERSION) == 2
        assert np.isfinite(_value(text, "anonstream_audit_risk_du", VERSION))
        assert _value(text, "anonstream_audit_attack_accuracy_before") == 1.0
        assert _value(text, "anonstream_audit_attack_accuracy_after") == 0.0
        assert "Acme" not in text and "Zeta" not in text

        snapshots = asyncio.run(_snapshots(settings))
        last = max((s for s in snapshots if s["risk"].get(VERSION, {}).get("all_time", {}).get("n") == 9),
                   key=lambda s: s["emitted_at"])
        kinds = {(a["kind"], a["scope"]) for a in last["alerts"]}
        assert {("dr", "all_time"), ("k", "all_time"), ("dr", "window"), ("k", "window")} <= kinds
        assert last["risk"][VERSION]["utility"]["changed_chunks"] == 2 and last["attack"]["chunks"] == 2
        assert b"Acme" not in orjson.dumps(last)
    finally:
        service.send_signal(signal.SIGTERM)
        assert service.wait(timeout=30) == 0
        keys = list(client.scan_iter(f"anonstream:audit-{run}:*"))
        if keys:
            client.delete(*keys)
        client.close()
