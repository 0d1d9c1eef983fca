"""Identities per value in Redis HyperLogLogs (stores/redis_values.py) against a real Redis: the same decisions as
the in-memory counts (on a single Redis and on a Redis Cluster), idempotent adds, keys that never hold a value in clear, expiry on every key."""
import uuid

import pytest

from anonstream.commonness import CommonRule, InMemoryValueCounts, release_common, value_key
from anonstream.pii.keys import KeyRing
from anonstream.records import EntitySpan
from anonstream.stores import redis_state
from anonstream.stores.redis_values import RedisValueCounts

pytestmark = pytest.mark.integration


@pytest.fixture
def client(redis_target):
    return redis_target.connect()


@pytest.fixture
def store(client):
    return RedisValueCounts(client, f"test-{uuid.uuid4().hex[:8]}", KeyRing(b"k" * 32), ttl_s=600)


def test_counts_match_the_in_memory_counts_and_adds_are_idempotent(store):
    memory = InMemoryValueCounts()
    keys = [value_key(v) for v in ("GAAP", "Choice Hotels", "EBITDA")]
    for i in range(60):
        identity = f"ticker=T{i % 40}"  # every identity twice: redeliveries add nothing
        chosen = keys[: 1 + i % 3]
        store.add(identity, chosen)
        memory.add(identity, chosen)
    assert store.identities() == memory.identities() == 40
    assert store.counts(keys) == memory.counts(keys)
    assert store.counts([value_key("never")]) == {value_key("never"): 0}


def test_keys_hold_no_value_in_clear_and_expire(client, store):
    store.add("ticker=A", [value_key("Choice Hotels")])
    names = [k.decode() for k in client.scan_iter(match=f"{store.prefix}:*")]
    assert len(names) == 2 and not any("choice" in n for n in names)
    assert all(0 < client.ttl(n) <= 600 for n in names)


def test_release_common_on_redis_decides_like_in_memory(store):
    for i in range(3):
        store.add(f"ticker=T{i}", [value_key("GAAP")])
    spans = [EntitySpan(0, 4, "ORG", "QUASI", "e1", "GAAP", kind="measure")]
    assert release_common(spans, "ticker=Z", store, CommonRule(common_k=4)) == 1
    assert spans[0].decision == "common(k=4)"
