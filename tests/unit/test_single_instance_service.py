"""A single-instance stage (the audit with an in-memory monitor) in the service shell (runtime/service.py), on an
in-memory lease and a fake broker: a second instance waits before it joins the consumer group, takes over when the
first stops, and an instance that loses its lease stops with exit code 75 instead of consuming beside its successor.
And the audit of many instances: only the lease holder writes snapshots."""
import asyncio
import dataclasses

import pytest

from anonstream.config import Settings
from anonstream.runtime import service as service_module
from anonstream.stages.base import Stage, StageDriver
from anonstream.stages.refit import RefitStage
from anonstream.stages.audit import AuditStage
from anonstream.stores.base import InMemoryCounters
from anonstream.stores.lease import InMemoryLease


class FakeConsumer:
    joined: list[str] = []

    def __init__(self, name):
        self.name = name

    async def start(self):
        FakeConsumer.joined.append(self.name)

    async def stop(self):
        FakeConsumer.joined.remove(self.name)

    async def getmany(self, timeout_ms=0, max_records=None):
        await asyncio.sleep(min(timeout_ms, 50) / 1000)
        return {}

    def assignment(self):
        return []


class FakeProducer:
    async def start(self):
        pass

    async def stop(self):
        pass


class Single(Stage):
    name = "audit"
    version = "1"
    inputs = ()
    single_instance = True

    def process(self, items):
        return [[] for _ in items]


@pytest.fixture
def fake_kafka(monkeypatch):
    FakeConsumer.joined = []
    names = iter(range(100))
    monkeypatch.setattr(service_module.kafka, "consumer", lambda *a, **k: FakeConsumer(next(names)))
    monkeypatch.setattr(service_module.kafka, "producer", lambda *a, **k: FakeProducer())


def _service(lease, ttl="0.9"):
    settings = dataclasses.replace(Settings(), audit_lease_ttl_s=float(ttl))
    return service_module.StageService(StageDriver(Single(), "t"), settings, lease=lease)


def test_the_audit_is_single_instance_only_with_an_in_memory_monitor():
    assert AuditStage(InMemoryCounters(), attack=object()).single_instance
    assert AuditStage(InMemoryCounters(), identification=object()).single_instance
    assert not AuditStage(InMemoryCounters()).single_instance
    assert not RefitStage.single_instance


def test_a_second_instance_stands_by_and_takes_over(fake_kafka):
    async def scenario():
        lease = InMemoryLease()
        a, b = _service(lease), _service(lease)
        run_a = asyncio.create_task(a.run())
        await asyncio.sleep(0.3)
        run_b = asyncio.create_task(b.run())
        await asyncio.sleep(1.5)  # longer than the TTL: a renews, b keeps waiting outside the group
        assert FakeConsumer.joined == [0]
        a.stop()
        await run_a
        for _ in range(40):
            await asyncio.sleep(0.1)
            if FakeConsumer.joined:
                break
        assert FakeConsumer.joined == [1]  # a released on shutdown; b joined without waiting for the TTL
        b.stop()
        await run_b
        assert (a.exit_code, b.exit_code) == (0, 0)

    asyncio.run(scenario())


def test_an_instance_that_loses_its_lease_stops_with_exit_code_75(fake_kafka):
    async def scenario():
        lease = InMemoryLease()
        a = _service(lease)
        run_a = asyncio.create_task(a.run())
        await asyncio.sleep(0.3)
        assert FakeConsumer.joined == [0]
        lease.renew = lambda owner, ttl: False  # another instance took the lease (a was paused, say)
        await asyncio.wait_for(run_a, 5)
        assert a.exit_code == service_module.LEASE_LOST_EXIT
        assert FakeConsumer.joined == []

    asyncio.run(scenario())


def test_a_stage_of_many_instances_takes_no_lease(fake_kafka):
    class Many(Single):
        single_instance = False

    settings = Settings()
    service = service_module.StageService(StageDriver(Many(), "t"), settings, lease=InMemoryLease())
    assert service.election is None


def test_of_many_audit_instances_only_the_lease_holder_writes_snapshots():
    from anonstream.stores.lease import LeaderElection
    from anonstream.stores.risk import InMemoryRiskTables

    lease, counters, tables = InMemoryLease(), InMemoryCounters(), InMemoryRiskTables()
    a, b = (AuditStage(counters, tables, snapshot_every_s=0, election=LeaderElection(lease, 30)) for _ in "ab")
    assert a.election.step() and not b.election.step()
    assert len(a.tick(100.0)) == 1 and b.tick(100.0) == []
    assert b.last_report is not None  # the other instance's gauges are fresh all the same
    a.election.release()
    b.election._next_attempt = float("-inf")
    assert b.election.step() and len(b.tick(200.0)) == 1
