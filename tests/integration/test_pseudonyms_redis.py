"""RedisPseudonymStore against a real Redis and a Redis Cluster: consistency across instances (restarts), HMAC-only keys,
atomic allocation under concurrency, tenant/namespace isolation, TTL, key rotation."""
from __future__ import annotations

import threading
import uuid

import pytest

from anonstream.pii.keys import ENV_KEY, KeyRing, MissingKeyError
from anonstream.stores.redis_pseudonyms import RedisPseudonymStore

pytestmark = pytest.mark.integration


@pytest.fixture
def client(redis_target):
    return redis_target.connect()


@pytest.fixture
def tenant():
    return f"t-{uuid.uuid4().hex[:8]}"


def _ring(key: str, previous: str | None = None) -> KeyRing:
    return KeyRing(key.encode(), previous.encode() if previous else None)


def test_same_entity_same_surrogate_across_store_instances(client, tenant):
    a = RedisPseudonymStore(client, ttl_s=60, tenant=tenant, keys=_ring("k1"))
    first = a.surrogate_for("ns", "PERSON:cengiz polat", "PERSON")
    other = a.surrogate_for("ns", "PERSON:jan kowalski", "PERSON")
    b = RedisPseudonymStore(client, ttl_s=60, tenant=tenant, keys=_ring("k1"))  # a restarted worker
    assert b.surrogate_for("ns", "PERSON:cengiz polat", "PERSON") == first == "[PERSON_1]"
    assert other == "[PERSON_2]"
    assert a.surrogate_for("ns", "EMAIL:x@example.org", "EMAIL") == "[EMAIL_1]"


def test_keys_never_contain_the_raw_entity_and_have_ttl(client, tenant):
    store = RedisPseudonymStore(client, ttl_s=60, tenant=tenant, keys=_ring("k1"))
    store.surrogate_for("ns", "PERSON:cengiz polat", "PERSON")
    keys = [k.decode() for k in client.scan_iter(match=f"anonstream:{{{tenant}|ns}}:*")]
    assert keys and not any("polat" in k.lower() for k in keys)
    mapping = [k for k in keys if ":m:" in k]
    assert len(mapping) == 1 and 0 < client.pttl(mapping[0]) <= 60_000
    assert all(b"polat" not in (client.get(k) or b"").lower() for k in keys)


def test_tenants_and_namespaces_are_isolated(client, tenant):
    s1 = RedisPseudonymStore(client, ttl_s=60, tenant=tenant, keys=_ring("k1"))
    s2 = RedisPseudonymStore(client, ttl_s=60, tenant=tenant + "-other", keys=_ring("k1"))
    s1.surrogate_for("ns", "PERSON:a", "PERSON")
    assert s1.surrogate_for("ns", "PERSON:b", "PERSON") == "[PERSON_2]"
    assert s2.surrogate_for("ns", "PERSON:b", "PERSON") == "[PERSON_1]"
    assert s1.surrogate_for("other-ns", "PERSON:b", "PERSON") == "[PERSON_1]"


def test_concurrent_allocation_is_atomic(client, tenant):
    store = RedisPseudonymStore(client, ttl_s=60, tenant=tenant, keys=_ring("k1"))
    results: dict[int, list[str]] = {}

    def worker(i: int) -> None:
        results[i] = [store.surrogate_for("ns", f"PERSON:p{j}", "PERSON") for j in range(20)]

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # every worker saw the same surrogate for each entity, and 20 entities got 20 distinct indexes
    assert all(r == results[0] for r in results.values())
    assert sorted(results[0], key=lambda s: int(s[8:-1])) == [f"[PERSON_{n}]" for n in range(1, 21)]


def test_key_rotation_keeps_surrogates(client, tenant):
    old = RedisPseudonymStore(client, ttl_s=60, tenant=tenant, keys=_ring("old"))
    before = old.surrogate_for("ns", "PERSON:cengiz polat", "PERSON")
    rotated = RedisPseudonymStore(client, ttl_s=60, tenant=tenant, keys=_ring("new", previous="old"))
    assert rotated.surrogate_for("ns", "PERSON:cengiz polat", "PERSON") == before
    after = RedisPseudonymStore(client, ttl_s=60, tenant=tenant, keys=_ring("new"))  # previous key dropped
    assert after.surrogate_for("ns", "PERSON:cengiz polat", "PERSON") == before  # migrated on first use
    unrelated = RedisPseudonymStore(client, ttl_s=60, tenant=tenant, keys=_ring("other"))
    assert unrelated.surrogate_for("ns", "PERSON:cengiz polat", "PERSON") != before


def test_missing_key_is_a_startup_error(client, monkeypatch):
    monkeypatch.delenv(ENV_KEY, raising=False)
    with pytest.raises(MissingKeyError, match=ENV_KEY):
        RedisPseudonymStore(client, ttl_s=60, tenant="t")
