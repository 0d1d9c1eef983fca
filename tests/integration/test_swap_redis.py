"""The swap stage's Redis stores on a real Redis: pool state survives a restart of the swap
service, a crash between a claim and the produce loses nothing, two workers never take the same
partner, counts are idempotent."""
from __future__ import annotations

import random
import threading

import pytest

from anonstream.stores.redis_swap import RedisSwapPoolStore, RedisTupleCounts
from anonstream.swap import Release, SwapProcessor
from anonstream.swap.stores import PoolEntry
from anonstream.swap.testing import make_chunk

pytestmark = pytest.mark.integration

A = "{ORG:Siemens} built a plant in {LOC/GPE:Texas} in {DATETIME/DATE:May 2001}."
B = "{ORG:ARM} opened an office in {LOC/GPE:Denmark} in {DATETIME/DATE:June 2003}."
C = "{ORG:Nokia} moved to {LOC/GPE:Finland} in {DATETIME/DATE:July 2005}."


@pytest.fixture
def tenant(redis_tenant):
    return redis_tenant


class Service:
    """One swap worker process: its own Redis connection, stores and processor."""

    def __init__(self, redis_target, tenant: str, seed: int = 0, now: float = 1000.0):
        self.client = redis_target.connect()
        self.now = now
        self.processor = SwapProcessor(Release.default(), RedisSwapPoolStore(self.client, tenant),
                                       RedisTupleCounts(self.client, tenant), random.Random(seed),
                                       clock=lambda: self.now)

    def stop(self) -> None:
        self.client.close()


def test_pool_state_survives_a_restart_of_the_swap_service(redis_target, tenant):
    first = Service(redis_target, tenant)
    assert len(first.processor.offer(make_chunk("d1", 0, A))) == 0
    assert len(first.processor.offer(make_chunk("d3", 0, C, component=4))) == 0
    first.stop()  # the service goes away; its pending chunks stay in Redis

    second = Service(redis_target, tenant, seed=1, now=1010.0)
    assert second.processor.pools.pools() == ["v1:c0", "v1:c4"]
    out = second.processor.offer(make_chunk("d2", 0, B))  # pairs with the chunk pooled before the restart
    assert [r["doc_id"] for r in out.log] == ["d2", "d1"] and {r["action"] for r in out.log} == {"swapped"}
    assert out.chunks[1].text == "ARM built a plant in Denmark in 2001."
    second.now = 2000.0
    expired = second.processor.expire()  # the other one leaves with its fallback after the wait
    assert [(r["doc_id"], r["action"], r["reason"]) for r in expired.log] == [("d3", "generalized", "timeout")]
    assert second.processor.pools.pools() == []
    # redeliveries after the restart are ignored (already released through claims)
    assert len(second.processor.offer(make_chunk("d1", 0, A))) == 0
    assert len(second.processor.offer(make_chunk("d3", 0, C, component=4))) == 0
    second.stop()


def test_a_crash_between_claim_and_produce_loses_nothing(redis_target, tenant):
    worker = Service(redis_target, tenant)
    worker.processor.offer(make_chunk("d1", 0, A))
    out = worker.processor.offer(make_chunk("d2", 0, B))  # claim done, output stashed ...
    worker.stop()  # ... and the process dies before the records reach the broker

    restarted = Service(redis_target, tenant, seed=2)
    recovered = restarted.processor.recover()
    assert [c.to_wire() for c in recovered.chunks] == [c.to_wire() for c in out.chunks]
    assert recovered.log == out.log and recovered.tokens == out.tokens
    assert len(restarted.processor.offer(make_chunk("d2", 0, B))) == 0  # the uncommitted input comes again
    restarted.processor.ack(recovered)
    assert len(restarted.processor.recover()) == 0
    restarted.stop()


def test_two_workers_never_take_the_same_partner(redis_target, tenant):
    first = Service(redis_target, tenant)
    first.processor.offer(make_chunk("d1", 0, A))
    workers = [Service(redis_target, tenant, seed=10 + i) for i in range(4)]
    barrier = threading.Barrier(len(workers))
    results = {}

    def run(i, worker):
        chunk = make_chunk(f"w{i}", 0, B.replace("ARM", f"ARM{i}"))
        barrier.wait()
        results[i] = worker.processor.offer(chunk)

    threads = [threading.Thread(target=run, args=(i, w)) for i, w in enumerate(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took_d1 = [i for i, out in results.items() if any(r["doc_id"] == "d1" for r in out.log)]
    assert len(took_d1) == 1  # exactly one worker got the waiting chunk
    # the others did not lose their chunks: they paired among themselves or wait in the pool
    released = {r["chunk_key"] for out in results.values() for r in out.log}
    waiting = {e.chunk_id for e in first.processor.pools.entries("v1:c0")}
    assert len(released) + len(waiting) == 5 and not released & waiting
    for w in [first, *workers]:
        w.stop()


def test_claims_are_atomic_under_contention(redis_target, tenant):
    client = redis_target.connect()
    store = RedisSwapPoolStore(client, tenant)
    entry = PoolEntry("x|0|", "x", True, "rare", "j", "u", ["Organization"], 1.0, 1)
    assert store.add("p", entry, {"doc_id": "x"}, ttl_s=60)
    assert not store.add("p", entry, {"doc_id": "x"}, ttl_s=60)  # already pending
    assert 0 < client.ttl(store.key("pool", "p", "idx")) <= 60
    wins = []

    def claim(i):
        wins.append(RedisSwapPoolStore(redis_target.connect(), tenant).claim(
            "p", ["x|0|"], [f"y{i}"], f"t{i}", {"n": i}, 60))

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(wins) == [False] * 7 + [True]
    assert len(store.outbox()) == 1 and store.status("p", "x|0|") == "done"
    assert not store.add("p", entry, {"doc_id": "x"}, ttl_s=60)  # done: a redelivery is not pooled again
    client.close()


def test_tuple_counts_are_idempotent_and_shared(redis_target, tenant):
    one = RedisTupleCounts(redis_target.connect(), tenant)
    two = RedisTupleCounts(redis_target.connect(), tenant)
    assert one.observe("s", "c1", "t", 60) == 1
    assert two.observe("s", "c1", "t", 60) == 1  # same chunk again (redelivery, other worker)
    assert two.observe("s", "c2", "t", 60) == 2
    assert one.count("s", "t") == 2 and one.count("other", "t") == 0


def test_tuple_counts_slide_with_their_window(redis_target, tenant):
    now = [1_000_000.0]
    counts = RedisTupleCounts(redis_target.connect(), tenant, window_s=7 * 3600, buckets=7,
                              clock=lambda: now[0])
    assert counts.observe("s", "c1", "t", 60) == 1
    now[0] += 3 * 3600
    assert counts.observe("s", "c2", "t", 60) == 2  # both inside the window
    now[0] += 5 * 3600
    assert counts.count("s", "t") == 1  # c1's bucket has left the window
    assert counts.observe("s", "c3", "t", 60) == 2
    now[0] += 8 * 3600
    assert counts.count("s", "t") == 0
    ttls = [counts.r.ttl(k) for k in counts.r.scan_iter(f"anonstream:{tenant}:swap:counts:{{{tenant}|swap|s}}:*")]
    assert ttls and all(0 < t <= 8 * 3600 for t in ttls)  # every bucket expires on its own


def test_replacement_memory_is_shared_by_workers_and_the_first_release_decides(redis_target, tenant):
    """Two swap workers on one Redis: an entity changed by one worker keeps that value in the chunks of its
    document the other worker releases (coreference across workers and restarts)."""
    from anonstream.stores.redis_swap import RedisReplacementMemory

    client = redis_target.connect()
    first, second = RedisReplacementMemory(client, tenant), RedisReplacementMemory(client, tenant)
    assert first.remember("d1", {"d1:Ankara": "swap|Izmir"}, 60) == {"d1:Ankara": "swap|Izmir"}
    assert second.remember("d1", {"d1:Ankara": "swap|Bursa", "d1:Kars": "generalize|Turkey"}, 60) == {
        "d1:Ankara": "swap|Izmir", "d1:Kars": "generalize|Turkey"}  # first writer wins
    assert second.recall("d2") == {} and 0 < client.ttl(f"anonstream:{tenant}:swap:memory:d1") <= 60
    release = Release.default()
    worker = SwapProcessor(release, RedisSwapPoolStore(client, tenant), RedisTupleCounts(client, tenant),
                           random.Random(0), clock=lambda: 1000.0, memory=second)
    out = worker.offer(make_chunk("d1", 3, "He moved back to {LOC#city:Ankara}.", chunk_count=4))
    out.extend(worker.drain())
    assert out.chunks[0].text == "He moved back to Izmir."
    client.close()


def test_exactly_once_outboxes_are_per_partition_and_resolved_by_committed_offset(redis_target, tenant):
    """With exactly-once, a claim goes to its input partition's outbox (same slot as the pools), and only that
    partition's owner resolves it: forgotten once its offset is committed, handed back with its record otherwise."""
    client = redis_target.connect()
    store = RedisSwapPoolStore(client, tenant)
    for cid in ("a", "b"):
        assert store.add("p", PoolEntry(cid, cid, True, "rare", "j", "u", ["x"], 1.0, 1), {"doc_id": cid}, 60)
    assert store.claim("p", ["a"], ["z"], "i:7:aa", {"chunks": [], "log": []}, 60, box="chunks.clustered|3")
    assert not store.claim("p", ["b"], ["z"], "i:8:bb", {"chunks": [], "log": []}, 60, box="chunks.clustered|3")
    assert store.outbox() == [] and [t for t, _ in store.outbox("chunks.clustered|3")] == ["i:7:aa"]
    worker = Service(redis_target, tenant)
    assert list(worker.processor.owed("chunks.clustered|3")) == [7]
    assert worker.processor.resolve("chunks.clustered|3", 7, "") == []  # offset 7 not committed: kept
    assert len(store.outbox("chunks.clustered|3")) == 1
    assert worker.processor.resolve("chunks.clustered|3", 8, "") == []  # committed: forgotten
    assert store.outbox("chunks.clustered|3") == []
    worker.stop()
    client.close()
