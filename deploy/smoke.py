#!/usr/bin/env python3
"""Smoke check of the local infrastructure started by deploy/infra.sh up.

usage: ANONSTREAM_BOOTSTRAP=... ANONSTREAM_REDIS_URL=... deploy/smoke.py
       (defaults: 127.0.0.1:19092 and redis://127.0.0.1:16379/0)

Kafka: produce one message to a fresh topic (auto-created by the broker) and consume it back
with a fresh consumer group (also exercises the group coordinator / __consumer_offsets).
Redis: SET/GET/DEL of a random key. Exit 0 on success, 1 otherwise.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import uuid

import redis
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer


async def kafka_roundtrip(bootstrap: str) -> float:
    topic = f"smoke-{uuid.uuid4().hex[:12]}"
    payload = f"hello {uuid.uuid4()}".encode()
    t0 = time.monotonic()
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await producer.start()
    try:
        md = await producer.send_and_wait(topic, payload, key=b"k")
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=f"{topic}-group",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    await consumer.start()
    try:
        msg = await asyncio.wait_for(consumer.getone(), timeout=30)
        await consumer.commit()
    finally:
        await consumer.stop()
    if msg.value != payload or msg.key != b"k":
        raise AssertionError(f"kafka: got {msg.key!r}/{msg.value!r}, expected b'k'/{payload!r}")
    dt = time.monotonic() - t0
    print(f"kafka ok: {topic} partition {md.partition} offset {md.offset} round trip {dt:.2f}s")
    return dt


def redis_roundtrip(url: str) -> None:
    client = redis.Redis.from_url(url, socket_timeout=5)
    key, value = f"anonstream:smoke:{uuid.uuid4().hex}", uuid.uuid4().hex
    try:
        client.set(key, value, ex=60)
        got = client.get(key)
        if got != value.encode():
            raise AssertionError(f"redis: got {got!r}, expected {value!r}")
        client.delete(key)
    finally:
        client.close()
    print(f"redis ok: SET/GET/DEL at {url}")


def main() -> int:
    bootstrap = os.environ.get("ANONSTREAM_BOOTSTRAP", "127.0.0.1:19092")
    redis_url = os.environ.get("ANONSTREAM_REDIS_URL", "redis://127.0.0.1:16379/0")
    try:
        asyncio.run(kafka_roundtrip(bootstrap))
        redis_roundtrip(redis_url)
    except Exception as exc:  # noqa: BLE001 - report any failure as a failed smoke
        print(f"smoke FAILED: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
