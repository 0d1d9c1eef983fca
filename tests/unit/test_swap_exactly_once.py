"""The swap stage's outbox with exactly-once (swap/pairing.py, stages/swap.py): every stashed output is resolved by
the outcome of the Kafka transaction that carries it (the committed offset and metadata of its input partition),
only by the owner of that partition, never re-emitted once committed. Pure cores: in-memory stores, no Kafka."""
from __future__ import annotations

import copy
import random

from anonstream import topics
from anonstream.stages.swap import SwapStage
from anonstream.swap import InMemoryPoolStore, InMemoryTupleCounts, SwapProcessor
from anonstream.swap.pairing import box_of, parse_token
from anonstream.swap.stores import PoolEntry
from anonstream.swap.testing import make_chunk

from anonstream.swap.release import DEFAULT_RELEASE, Release

T = "chunks.clustered"
A = "{ORG:Siemens} built a plant in {LOC/GPE:Texas} in {DATETIME/DATE:May 2001}."
B = "{ORG:ARM} opened an office in {LOC/GPE:Denmark} in {DATETIME/DATE:June 2003}."


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def release(pool=None) -> Release:
    obj = copy.deepcopy(DEFAULT_RELEASE)
    obj["categories"]["Date"] = {"status": "G", "generalizer": {"name": "date", "level": "month"}}
    obj["pool"].update(pool or {})
    return Release.from_dict(obj)


def stage(pools, counts, seed=0, clock=None, **pool):
    rel = release(pool=pool) if pool else release()
    s = SwapStage(SwapProcessor(rel, pools, counts, random.Random(seed), clock or Clock()), exactly_once=True)
    return s


def sanitized(results) -> list[str]:
    """(doc id, chunk index) of the sanitized chunks emitted."""
    return [(e.value["doc_id"], e.value["chunk_index"]) for emits in results for e in emits
            if e.topic is topics.CHUNKS_SANITIZED]


def test_a_claim_is_stashed_in_its_partitions_outbox_under_its_input_offset():
    pools, counts = InMemoryPoolStore(), InMemoryTupleCounts()
    s = stage(pools, counts)
    s.process_sourced([(None, make_chunk("d1", 0, A))], [(T, 0, 10)])
    results = s.process_sourced([(None, make_chunk("d2", 0, B))], [(T, 3, 7)])
    assert len(sanitized(results)) == 2
    assert pools.outbox("") == [] and pools.outbox(box_of(T, 0)) == []
    [(token, _)] = pools.outbox(box_of(T, 3))
    assert parse_token(token) == ("i", 7)
    assert [e.source for e in pools.entries("v1:c0")] == []  # the pooled partner left
    s.after_produced([e for emits in results for e in emits])  # the transaction committed
    assert pools.outbox(box_of(T, 3)) == []


def test_a_restarted_instance_does_not_re_emit_what_another_instance_claimed():
    pools, counts = InMemoryPoolStore(), InMemoryTupleCounts()
    live = stage(pools, counts)
    live.process_sourced([(None, make_chunk("d1", 0, A))], [(T, 0, 0)])
    claimed = live.process_sourced([(None, make_chunk("d2", 0, B))], [(T, 1, 0)])  # not committed yet
    assert len(sanitized(claimed)) == 2
    restarted = stage(pools, counts, seed=1)  # owns partition 2 only
    assert restarted.assigned({(T, 2): (5, "")}) == {}
    results = restarted.process_sourced([(None, make_chunk("d3", 0, "{ORG:Nokia} in {LOC/GPE:Chile}."))],
                                        [(T, 2, 5)])
    assert not {d for d, _ in sanitized(results)} & {"d1", "d2"}  # the other instance's claim
    assert len(pools.outbox(box_of(T, 1))) == 1


def test_a_crash_between_commit_and_ack_re_emits_nothing():
    pools, counts = InMemoryPoolStore(), InMemoryTupleCounts()
    first = stage(pools, counts)
    first.process_sourced([(None, make_chunk("d1", 0, A))], [(T, 0, 0)])
    first.process_sourced([(None, make_chunk("d2", 0, B))], [(T, 0, 1)])  # committed offset 2, then killed: no ack
    assert len(pools.outbox(box_of(T, 0))) == 1
    owner = stage(pools, counts, seed=1)
    assert owner.assigned({(T, 0): (2, "")}) == {}  # offset 1 < 2: that transaction committed
    assert pools.outbox(box_of(T, 0)) == []
    assert sanitized(owner.process_sourced([(None, make_chunk("d4", 0, A.replace("Siemens", "Bosch")))],
                                           [(T, 0, 2)])) == []  # pooled, nothing of d1/d2 again


def test_a_crash_before_the_commit_re_emits_with_the_record_read_again():
    pools, counts = InMemoryPoolStore(), InMemoryTupleCounts()
    first = stage(pools, counts)
    first.process_sourced([(None, make_chunk("d1", 0, A))], [(T, 0, 0)])
    lost = first.process_sourced([(None, make_chunk("d2", 0, B))], [(T, 0, 1)])  # killed before the commit
    owner = stage(pools, counts, seed=1)
    assert owner.assigned({(T, 0): (1, "")}) == {}  # offset 1 not committed: waits for its record
    assert len(pools.outbox(box_of(T, 0))) == 1
    again = owner.process_sourced([(None, make_chunk("d2", 0, B))], [(T, 0, 1)])
    assert sorted(sanitized(again)) == sorted(sanitized(lost))
    assert [e.value["text"] for emits in again for e in emits if e.topic is topics.CHUNKS_SANITIZED] == \
        [e.value["text"] for emits in lost for e in emits if e.topic is topics.CHUNKS_SANITIZED]
    owner.after_produced([e for emits in again for e in emits])
    assert pools.outbox(box_of(T, 0)) == []


def test_the_same_batch_handled_twice_emits_its_claims_again():
    """A batch read again after a store outage or a failed batch: the claims of the first attempt come with it."""
    pools, counts = InMemoryPoolStore(), InMemoryTupleCounts()
    s = stage(pools, counts)
    items = [(None, make_chunk("d1", 0, A)), (None, make_chunk("d2", 0, B))]
    first = s.process_sourced(items, [(T, 0, 0), (T, 0, 1)])
    second = s.process_sourced(items, [(T, 0, 0), (T, 0, 1)])
    assert sanitized(first) == sanitized(second) and len(sanitized(second)) == 2
    s.after_produced([e for emits in second for e in emits])
    assert pools.outbox(box_of(T, 0)) == []


def test_the_wait_bound_releases_only_chunks_of_owned_partitions_in_a_bound_transaction():
    pools, counts, clock = InMemoryPoolStore(), InMemoryTupleCounts(), Clock()
    s = stage(pools, counts, clock=clock)
    s.process_sourced([(None, make_chunk("d1", 0, A))], [(T, 0, 4)])
    s.process_sourced([(None, make_chunk("d3", 0, "{ORG:Nokia} in {LOC/GPE:Chile}.", component=5))], [(T, 1, 9)])
    assert s.tick(clock.now + 10_000) == []  # with exactly-once, expiry is bound_tick's
    bound = s.bound_tick(clock.now + 10_000, {(T, 0): 5})
    assert list(bound) == [(T, 0)]
    [(emits, k)] = bound[(T, 0)]
    assert sanitized([emits]) == [("d1", 0)]
    [(token, _)] = pools.outbox(box_of(T, 0))
    assert parse_token(token) == ("t", 5, k)
    assert [e.chunk_id for e in pools.entries("v1:c5")]  # partition 1's chunk still waits for its owner
    # killed after the commit (offset 5 again, metadata k), before the ack: the next owner forgets it
    owner = stage(pools, counts, seed=3, clock=clock)
    assert owner.assigned({(T, 0): (5, k)}) == {}
    assert pools.outbox(box_of(T, 0)) == []


def test_an_uncommitted_bound_transaction_is_committed_again_by_the_next_owner_with_its_metadata():
    pools, counts, clock = InMemoryPoolStore(), InMemoryTupleCounts(), Clock()
    s = stage(pools, counts, clock=clock)
    s.process_sourced([(None, make_chunk("d1", 0, A))], [(T, 0, 4)])
    [(emits, k)] = s.bound_tick(clock.now + 10_000, {(T, 0): 5})[(T, 0)]  # killed before the commit
    owner = stage(pools, counts, seed=3, clock=clock)
    again = owner.assigned({(T, 0): (5, "")})
    [(emits_again, k_again)] = again[(T, 0)]
    assert k_again == k and [e.key for e in emits_again] == [e.key for e in emits]
    # a later owner after that transaction committed: nothing; after a later batch (offset 7): nothing either
    assert stage(pools, counts).assigned({(T, 0): (5, k)}) == {}
    owner.after_produced(emits_again)
    assert pools.outbox(box_of(T, 0)) == []


def test_resolution_is_by_committed_offset_and_metadata():
    pools = InMemoryPoolStore()
    p = SwapProcessor(release(), pools, InMemoryTupleCounts(), random.Random(0), Clock())
    box = box_of(T, 2)
    for token in ("i:3:aa", "i:8:bb", "t:8:k1:cc", "t:8:k2:dd", "t:6:k0:ee"):
        pools._outbox.setdefault(box, {})[token] = {"chunks": [], "log": []}
    again = p.resolve(box, 8, "k1")
    assert sorted(t for t, _ in pools.outbox(box)) == ["i:8:bb", "t:8:k2:dd"]  # i:3, t:6 and t:8 with k1 committed
    assert [(out.tokens, k) for out, k in again] == [(["t:8:k2:dd"], "k2")]
    assert p.resolve(box_of(T, 9), None, "") == []


def test_the_in_memory_store_refuses_a_claim_of_an_offered_chunk_already_done():
    pools = InMemoryPoolStore()
    for cid in ("a", "b"):
        assert pools.add("p", PoolEntry(cid, cid, True, "rare", "j", "u", ["x"], 1.0, 1), {"doc_id": cid}, 60)
    assert pools.claim("p", ["a"], ["z"], "t1", {"n": 1}, 60, box="T|0")
    assert not pools.claim("p", ["b"], ["z"], "t2", {"n": 2}, 60, box="T|0")  # z left already, with a
    assert pools.outbox("T|0") == [("t1", {"n": 1})] and pools.outbox() == []
    pools.ack(["t1"], "T|0")
    assert pools.outbox("T|0") == []


def test_at_least_once_keeps_the_shared_outbox():
    pools, counts = InMemoryPoolStore(), InMemoryTupleCounts()
    s = SwapStage(SwapProcessor(release(), pools, counts, random.Random(0), Clock()))
    s.process_sourced([(None, make_chunk("d1", 0, A))], [(T, 0, 0)])
    s.process_sourced([(None, make_chunk("d2", 0, B))], [(T, 0, 1)])
    assert len(pools.outbox()) == 1
    restarted = SwapStage(SwapProcessor(release(), pools, counts, random.Random(1), Clock()))
    results = restarted.process_sourced([(None, make_chunk("d5", 0, "{ORG:Nokia} in {LOC/GPE:Chile}."))],
                                        [(T, 1, 0)])
    assert sorted(sanitized(results))[:2] == [("d1", 0), ("d2", 0)]  # re-emitted: a duplicate at worst
    restarted.after_produced([e for emits in results for e in emits])
    assert pools.outbox() == []
