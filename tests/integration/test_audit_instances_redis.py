"""Two audit instances on a real Redis and on the Redis Cluster (``redis_target``): each observes half of the
records, both report the merged counts and risk of all of them, only the holder of the snapshot lease writes
snapshots, and the other takes over when that lease is not renewed."""
from __future__ import annotations

import time

import pytest

from anonstream import topics
from anonstream.stages.audit import AuditStage
from anonstream.stores.lease import LeaderElection
from anonstream.stores.redis_lease import RedisLease
from anonstream.stores.redis_risk import RedisRiskTables
from anonstream.stores.redis_state import RedisCounters
from anonstream.stores.risk import InMemoryRiskTables
from anonstream.stores.base import InMemoryCounters

from test_audit_redis import RECORDS, VERSION, feed

pytestmark = pytest.mark.integration


def _instance(redis_target, tenant, name, ttl_s=30.0):
    client = redis_target.connect()
    election = LeaderElection(RedisLease(client, tenant, area="audit"), ttl_s, name=name)
    return AuditStage(RedisCounters(client, tenant), RedisRiskTables(client, tenant), snapshot_every_s=0,
                      clock=lambda: 1.0, release_version=VERSION, swapped=("ORG",), election=election)


def test_two_instances_merge_their_partitions_and_one_writes_snapshots(redis_target, redis_tenant):
    alone = AuditStage(InMemoryCounters(), InMemoryRiskTables(), clock=lambda: 1.0, release_version=VERSION,
                       swapped=("ORG",))
    feed(alone, RECORDS)
    expected = alone.report()

    a, b = (_instance(redis_target, redis_tenant, name) for name in ("a", "b"))
    assert a.election.step() and not b.election.step()
    feed(a, RECORDS[::2])   # each instance its partitions' records
    feed(b, RECORDS[1::2])
    feed(b, RECORDS[:3])    # and a redelivery after a rebalance: the risk tables count those chunks once
    emitted = {name: stage.tick(time.time()) for name, stage in (("a", a), ("b", b))}
    assert len(emitted["a"]) == 1 and emitted["a"][0].topic is topics.AUDIT_METRICS and emitted["b"] == []
    for stage in (a, b):
        assert stage.last_report["risk"][VERSION]["all_time"] == expected["risk"][VERSION]["all_time"]
    assert a.metrics()["snapshot_writer"] == 1 and b.metrics()["snapshot_writer"] == 0
    for stage in (a, b):
        stage.close()


def test_the_other_instance_writes_snapshots_once_the_lease_lapses(redis_target, redis_tenant):
    ttl = 1.2
    a, b = (_instance(redis_target, redis_tenant, name, ttl_s=ttl) for name in ("a", "b"))
    assert a.election.step()
    b.start()
    feed(b, RECORDS)
    assert b.tick(time.time()) == []
    deadline = time.monotonic() + ttl + ttl / 3 + 2   # a is gone: no renewal, no release
    while not b.election.is_leader and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(b.tick(time.time())) == 1
    b.close()


def test_an_audit_with_an_in_memory_monitor_is_one_instance(redis_target, redis_tenant):
    client = redis_target.connect()
    election = LeaderElection(RedisLease(client, redis_tenant, area="audit"), 30)
    with pytest.raises(ValueError):
        AuditStage(RedisCounters(client, redis_tenant), attack=object(), election=election)
    assert AuditStage(RedisCounters(client, redis_tenant), attack=object()).single_instance
    assert not AuditStage(RedisCounters(client, redis_tenant), election=election).single_instance
