"""The audit stage's risk tables on a real Redis: the same snapshot as in memory, redeliveries
(also from a second audit worker) counted once, tables survive a restart of the service."""
from __future__ import annotations


import orjson
import pytest
import redis

from anonstream import topics
from anonstream.stages.base import InputMessage, StageDriver
from anonstream.stages.audit import AuditStage
from anonstream.stores.base import InMemoryCounters
from anonstream.stores.redis_risk import RedisRiskTables
from anonstream.stores.risk import InMemoryRiskTables

VERSION = "v-it"


def log_record(doc: str, index: int, digest: str, action: str = "untouched", after: dict | None = None) -> dict:
    return {
        "schema": "swap-log.v1", "release": {"schema": "release.v1", "name": "it", "version": VERSION},
        "doc_id": doc, "chunk_index": index, "chunk_key": f"{doc}#{index}", "pool": "unclustered",
        "action": action, "reason": "selected", "rare": False, "seen_count": 0, "tuple_digest": digest,
        "pair_id": None, "partner": None, "categories": [], "tuple_before": {"ORG": digest},
        "tuple_after": after or {"ORG": digest}, "changes": [], "released_at": 1.0,
    }


RECORDS = ([log_record("A", i, "a") for i in range(3)] + [log_record("B", i, "b") for i in range(2)]
           + [log_record("C", 0, "c", "swapped", {"ORG": "x"}), log_record("D", 0, "d", "swapped", {"ORG": "x"}),
              log_record("E", 0, "e", "generalized", {"ORG": "a company"}), log_record("F", 0, "f")])


def feed(audit: AuditStage, records: list[dict]) -> None:
    driver = StageDriver(audit, "t")
    name = topics.name(topics.SWAP_LOG, "t")
    handled = driver.handle([InputMessage(name, 0, i, b"k", orjson.dumps(r)) for i, r in enumerate(records)])
    assert not handled.dead_letters

pytestmark = pytest.mark.integration


@pytest.fixture
def tenant(redis_tenant):
    return redis_tenant


def _stage(tables) -> AuditStage:
    return AuditStage(InMemoryCounters(), tables, clock=lambda: 1.0, release_version=VERSION, swapped=("ORG",))


def test_redis_tables_match_memory_and_count_redeliveries_once(redis_url, tenant):
    memory = _stage(InMemoryRiskTables())
    feed(memory, RECORDS)
    expected = memory.report()["risk"]

    client = redis.Redis.from_url(redis_url)
    worker = _stage(RedisRiskTables(client, tenant))
    feed(worker, RECORDS[:6])
    other = _stage(RedisRiskTables(redis.Redis.from_url(redis_url), tenant))   # a second worker, overlapping input
    feed(other, RECORDS[3:])
    assert worker.report()["risk"] == expected
    restarted = _stage(RedisRiskTables(redis.Redis.from_url(redis_url), tenant))
    feed(restarted, RECORDS)                                                  # redelivered after a restart
    assert restarted.report()["risk"] == expected and expected[VERSION]["n"] == 9
    assert client.ttl(f"anonstream:{tenant}:audit:risk:{VERSION}:seen:A#0") > 0
    client.close()
