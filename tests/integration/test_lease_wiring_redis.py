"""The services' wiring of the leases on a real Redis and on the Redis Cluster (``redis_target``), the broker faked:
``anonstream service refit`` joins the leader election when its loop starts and releases the lease when it stops;
the audit takes its snapshot lease; two refit services, one leader."""
from __future__ import annotations

import asyncio
import dataclasses

import pytest

from anonstream.config import Settings
from anonstream.runtime import service as service_module
from anonstream.runtime.wiring import build_stage, redis_stores
from anonstream.stages.base import StageDriver
from anonstream.stores.redis_lease import RedisLease

pytestmark = pytest.mark.integration


class FakeConsumer:
    async def start(self):
        pass

    async def stop(self):
        pass

    async def getmany(self, timeout_ms=0, max_records=None):
        await asyncio.sleep(min(timeout_ms, 50) / 1000)
        return {}

    def assignment(self):
        return []


class FakeProducer:
    sent: list[str] = []

    async def start(self):
        pass

    async def stop(self):
        pass

    async def partitions_for(self, topic):
        return {0}

    async def send(self, topic, value, key=None, partition=None, headers=None):
        FakeProducer.sent.append(topic)
        done = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done


@pytest.fixture
def fake_kafka(monkeypatch):
    FakeProducer.sent = []
    monkeypatch.setattr(service_module.kafka, "consumer", lambda *a, **k: FakeConsumer())
    monkeypatch.setattr(service_module.kafka, "producer", lambda *a, **k: FakeProducer())


def _service(name, redis_target, tenant, instance):
    settings = dataclasses.replace(Settings(), redis_url=redis_target.url, redis_cluster=redis_target.cluster,
                                   tenant=tenant, instance=str(instance), refit_lease_ttl_s=3.0,
                                   audit_lease_ttl_s=3.0)
    stores = redis_stores(settings, name)
    stage = build_stage(name, settings, stores)
    return service_module.StageService(StageDriver(stage, settings.topic_prefix), settings, lease=stores.lease)


async def _until(condition, timeout_s):
    for _ in range(int(timeout_s / 0.05)):
        if condition():
            return True
        await asyncio.sleep(0.05)
    return False


def test_two_refit_services_elect_one_leader_and_release_on_stop(fake_kafka, redis_target, redis_tenant):
    lease = RedisLease(redis_target.connect(), redis_tenant, area="mixture")

    async def scenario():
        a, b = (_service("refit", redis_target, redis_tenant, i) for i in (0, 1))
        runs = [asyncio.create_task(a.run())]
        assert await _until(lambda: a.stage.refitter.election.is_leader, 5)
        runs.append(asyncio.create_task(b.run()))
        await asyncio.sleep(1.5)
        assert not b.stage.refitter.election.is_leader
        assert (a.stage.metrics()["leader"], b.stage.metrics()["leader"]) == (1, 0)
        assert lease.holder() == (a.stage.refitter.election.owner, 1)
        a.stop()
        await runs[0]
        assert await _until(lambda: b.stage.refitter.election.is_leader, 3)  # a released: b's next attempt
        assert lease.holder()[1] == 2
        b.stop()
        await runs[1]
        assert lease.holder()[0] is None

    asyncio.run(scenario())


def test_the_audit_service_takes_the_snapshot_lease(fake_kafka, redis_target, redis_tenant):
    async def scenario():
        audit = _service("audit", redis_target, redis_tenant, 0)
        assert not audit.stage.single_instance and audit.election is None  # consumes beside others
        run = asyncio.create_task(audit.run())
        assert await _until(lambda: audit.stage.election.is_leader, 5)
        assert audit.stage.metrics()["snapshot_writer"] == 1
        assert await _until(lambda: FakeProducer.sent, 5)  # and writes the snapshots
        assert all(topic.endswith("audit-metrics.v1") for topic in FakeProducer.sent)
        audit.stop()
        await run
        assert RedisLease(redis_target.connect(), redis_tenant, area="audit").holder()[0] is None

    asyncio.run(scenario())
