"""The audit stage's risk tables on a real Redis: the same snapshot as in memory, redeliveries
(also from a second audit worker) counted once, tables (all time, sliding window, DU sums) survive a restart
of the service."""
from __future__ import annotations


import orjson
import pytest

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


def test_redis_tables_match_memory_and_count_redeliveries_once(redis_target, tenant):
    memory = _stage(InMemoryRiskTables())
    feed(memory, RECORDS)
    expected = memory.report()["risk"]

    client = redis_target.connect()
    worker = _stage(RedisRiskTables(client, tenant))
    feed(worker, RECORDS[:6])
    other = _stage(RedisRiskTables(redis_target.connect(), tenant))   # a second worker, overlapping input
    feed(other, RECORDS[3:])
    assert worker.report()["risk"] == expected
    restarted = _stage(RedisRiskTables(redis_target.connect(), tenant))
    feed(restarted, RECORDS)                                                  # redelivered after a restart
    assert restarted.report()["risk"] == expected and expected[VERSION]["all_time"]["n"] == 9
    assert client.ttl(f"anonstream:{{{tenant}|audit}}:risk:{VERSION}:seen:A#0") > 0
    client.close()


def _timed(records: list[dict], times: list[float]) -> list[dict]:
    return [{**r, "released_at": t} for r, t in zip(records, times)]


# 30 s window in 10 s buckets; the last record (t = 95) leaves buckets 7, 8, 9 live
TIMES = [5.0, 15.0, 25.0, 35.0, 45.0, 72.0, 81.0, 88.0, 95.0]


def _windowed(tables) -> AuditStage:
    return AuditStage(InMemoryCounters(), tables, clock=lambda: 1.0, release_version=VERSION, swapped=("ORG",))


def test_redis_window_matches_memory_survives_a_restart_and_prunes_old_buckets(redis_target, tenant):
    records = _timed(RECORDS, TIMES)
    memory = _windowed(InMemoryRiskTables(window_s=30, bucket_s=10))
    feed(memory, records)
    expected = memory.report()["risk"]
    assert expected[VERSION]["window"]["n"] == 4 and expected[VERSION]["all_time"]["n"] == 9

    client = redis_target.connect()
    worker = _windowed(RedisRiskTables(client, tenant, window_s=30, bucket_s=10))
    feed(worker, records[:5])
    feed(worker, records[5:] + records[:3])                                # redeliveries across the window move
    assert worker.report()["risk"] == expected
    restarted = _windowed(RedisRiskTables(redis_target.connect(), tenant, window_s=30, bucket_s=10))
    assert restarted.report()["risk"] == expected                          # a new store object, same keys
    feed(restarted, records)
    assert restarted.report()["risk"] == expected
    buckets = sorted(int(b) for b in client.zrange(f"anonstream:{{{tenant}|audit}}:risk:{VERSION}:w:buckets", 0, -1))
    assert buckets == [7, 8, 9]
    assert not list(client.scan_iter(f"anonstream:{{{tenant}|audit}}:risk:{VERSION}:w:0:*"))
    client.close()


def test_redis_utility_sums_match_memory_and_count_once(redis_target, tenant):
    from anonstream.stores.risk import UtilityObservation

    obs = [UtilityObservation("A|0", 1, 12.5, 10.25), UtilityObservation("B|0", 1, 7.0, 6.5),
           UtilityObservation("C|0", 2, 3.0, 3.5)]
    memory = InMemoryRiskTables()
    memory.observe_utility(VERSION, obs)
    tables = RedisRiskTables(redis_target.connect(), tenant)
    assert tables.observe_utility(VERSION, obs[:2]) == 2
    assert tables.observe_utility(VERSION, obs) == 1                       # A, B redelivered
    restarted = RedisRiskTables(redis_target.connect(), tenant)
    assert restarted.utility(VERSION) == memory.utility(VERSION)
    assert restarted.versions() == [VERSION]
    du = _windowed(restarted).report()["risk"][VERSION]["utility"]
    assert du["changed_chunks"] == 3 and du["du"] == pytest.approx((10.25 + 6.5 + 3.5) / (12.5 + 7.0 + 3.0))
