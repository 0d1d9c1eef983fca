"""The refit leader's lease and fenced publish on a real Redis and on the Redis Cluster (``redis_target``): two
contenders and one publishes, a leader that stops renewing is replaced, a stale leader's publish is refused."""
import threading
import time

import numpy as np
import pytest

from anonstream.records import Chunk
from anonstream.stages.refit import Refitter, RefitStage
from anonstream.stores import redis_state
from anonstream.stores.base import StaleLeader
from anonstream.stores.lease import LeaderElection
from anonstream.stores.redis_lease import RedisLease

pytestmark = pytest.mark.integration


def _rows(n, d=8, k=3, seed=0):
    rng = np.random.default_rng(seed)
    X = np.repeat(rng.normal(size=(k, d)), -(-n // k), axis=0)[:n] + 0.15 * rng.normal(size=(n, d))
    return (X / np.linalg.norm(X, axis=1, keepdims=True)).astype(np.float32)


def _chunks(X):
    return [(None, Chunk("d", i, len(X), "t", 0, 1, entities=[],
                         embedding={"model": "m", "dim": X.shape[1], "vector": x.tolist()}))
            for i, x in enumerate(X)]


def _instance(redis_target, tenant, name, ttl_s=30.0):
    """One refit instance as a service builds it: its own client, the Redis stores, a lease election."""
    client = redis_target.connect()
    election = LeaderElection(RedisLease(client, tenant), ttl_s, name=name)
    refitter = Refitter(redis_state.RedisReservoir(client, tenant, 500, seed=0),
                        redis_state.RedisModelRegistry(client, tenant), "pkb", 3, 0.001, interval_s=0,
                        min_samples=32, election=election)
    return RefitStage(refitter)


def _wait_for(condition, timeout_s):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_the_lease_keys_share_the_registry_slot(redis_target, redis_tenant):
    client = redis_target.connect()
    lease, registry = RedisLease(client, redis_tenant), redis_state.RedisModelRegistry(client, redis_tenant)
    assert lease.lease_key.startswith(registry.prefix + ":") and lease.token_key.startswith(registry.prefix + ":")
    if redis_target.cluster:
        assert client.keyslot(lease.lease_key) == client.keyslot(registry.key("model", "current"))


def test_of_many_simultaneous_contenders_exactly_one_acquires(redis_target, redis_tenant):
    elections = [LeaderElection(RedisLease(redis_target.connect(), redis_tenant), 30, name=f"c{i}")
                 for i in range(8)]
    barrier = threading.Barrier(len(elections))
    results = [None] * len(elections)

    def contend(i):
        barrier.wait()
        results[i] = elections[i].step()

    threads = [threading.Thread(target=contend, args=(i,)) for i in range(len(elections))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count(True) == 1
    leader = elections[results.index(True)]
    assert leader.token == RedisLease(redis_target.connect(), redis_tenant).holder()[1]


def test_two_refit_instances_and_only_the_leader_publishes(redis_target, redis_tenant):
    a, b = (_instance(redis_target, redis_tenant, name) for name in ("a", "b"))
    assert a.refitter.election.step() and not b.refitter.election.step()
    a.process(_chunks(_rows(60, seed=1)))
    b.process(_chunks(_rows(60, seed=2)))  # both feed the one reservoir
    assert a.refitter.reservoir.seen() == 120
    events = [a.tick(time.time()), b.tick(time.time())]
    assert [len(e) for e in events] == [1, 0]
    registry = a.refitter.registry
    assert registry.current_version() == 1
    assert (a.metrics()["leader"], b.metrics()["leader"]) == (1, 0)
    for stage in (a, b):
        stage.close()


def test_a_leader_that_stops_renewing_is_replaced_and_its_stale_publish_refused(redis_target, redis_tenant):
    ttl = 1.5
    a, b = (_instance(redis_target, redis_tenant, name, ttl_s=ttl) for name in ("a", "b"))
    assert a.refitter.election.step()
    b.start()  # b's election thread: retries every ttl/3
    a.process(_chunks(_rows(90)))
    stale = a.refitter.election.fence()
    registry = a.refitter.registry
    assert len(a.tick(time.time())) == 1 and registry.current_version() == 1
    killed = time.monotonic()  # a is "killed": no more renewals, no release
    assert _wait_for(lambda: b.refitter.election.is_leader, ttl + 2)
    took = time.monotonic() - killed
    assert ttl * 0.9 <= took <= ttl + ttl / 3 + 1.0
    assert b.refitter.election.token == stale.token + 1
    # a wakes up with its old fence: the registry refuses, atomically, and the model in force is untouched
    with pytest.raises(StaleLeader):
        registry.publish(b"stale model", {"reason": "stale"}, fence=stale)
    assert registry.current_version() == 1
    # ... and a's own stage does not even try: its local bound passed
    assert a.tick(time.time()) == [] and registry.current_version() == 1
    # b publishes with its fence
    assert len(b.tick(time.time())) == 1
    assert registry.current_version() == 3  # version 2 was the refused publish's (a gap, nothing stored)
    assert registry.load(2) is None
    b.close()
    assert RedisLease(redis_target.connect(), redis_tenant).holder()[0] is None  # released on shutdown


def test_a_stale_token_is_refused_even_while_its_lease_value_is_reused(redis_target, redis_tenant):
    """The fence checks the token, not only the lease value: a write with an old token is refused even when its
    owner holds the lease again (a later acquisition, a new token)."""
    client = redis_target.connect()
    lease, registry = RedisLease(client, redis_tenant), redis_state.RedisModelRegistry(client, redis_tenant)
    first = lease.try_acquire("owner-x", 30)
    old = lease.fence("owner-x", first)
    lease.release("owner-x")
    second = lease.try_acquire("owner-x", 30)
    assert second == first + 1
    with pytest.raises(StaleLeader):
        registry.publish(b"m", {}, fence=old)
    assert registry.publish(b"m", {}, fence=lease.fence("owner-x", second)) >= 1


def test_release_on_shutdown_hands_over_without_waiting_for_the_ttl(redis_target, redis_tenant):
    a, b = (_instance(redis_target, redis_tenant, name, ttl_s=30) for name in ("a", "b"))
    a.start()
    assert _wait_for(lambda: a.refitter.election.is_leader, 5)
    b.start()
    time.sleep(0.5)
    assert not b.refitter.election.is_leader
    a.close()
    assert _wait_for(lambda: b.refitter.election.is_leader, 30 / 3 + 2)  # b's next retry, not the 30 s TTL
    b.close()


def test_the_synthesizer_and_hierarchy_publishes_refuse_a_token_older_than_one_that_published(
        redis_target, redis_tenant):
    """Registries outside the lease's slot check the token against the highest one that published there."""
    from anonstream.stores.redis_hierarchy import RedisHierarchyRegistry
    from test_hierarchy_store import _hierarchy

    client = redis_target.connect()
    lease = RedisLease(client, redis_tenant)
    old = lease.fence("owner-a", lease.try_acquire("owner-a", 30))
    lease.release("owner-a")
    new = lease.fence("owner-b", lease.try_acquire("owner-b", 30))
    synthesis = redis_state.RedisModelRegistry(client, redis_tenant, area="synthesis")
    hierarchies = RedisHierarchyRegistry(client, redis_tenant)
    assert synthesis.publish(b"s-old", {}, fence=old) == 1  # nobody newer published here yet: accepted
    assert synthesis.publish(b"s-new", {}, fence=new) == 2
    with pytest.raises(StaleLeader):
        synthesis.publish(b"s-stale", {}, fence=old)
    assert synthesis.current_version() == 2 and synthesis.load(2).model_bytes == b"s-new"
    assert hierarchies.publish("education", _hierarchy("Masters"), fence=new) == 1
    with pytest.raises(StaleLeader):
        hierarchies.publish("education", _hierarchy("Stale"), fence=old)
    assert hierarchies.current_version("education") == 1
    assert hierarchies.publish("education", _hierarchy("Graduate"), fence=new) == 3  # 2 was the refused one's
    assert hierarchies.categories() == ["education"]


def test_an_acquisition_whose_reply_was_lost_is_found_again(redis_target, redis_tenant):
    lease = RedisLease(redis_target.connect(), redis_tenant)
    token = lease.try_acquire("owner-x", 30)
    assert lease.try_acquire("owner-x", 30) == token  # the same owner asks again: its token, no new one
    assert lease.try_acquire("owner-y", 30) is None
    assert lease.holder() == ("owner-x", token)
