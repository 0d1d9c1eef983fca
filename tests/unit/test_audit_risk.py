"""The audit stage's risk tables and snapshot (paper 000 eq. 2.14-2.16): n, s1, DR against a direct
computation with risk.pitman, alerts, edge cases without NaN, idempotent counting of redeliveries."""
from __future__ import annotations

import math

import orjson
import pytest

from anonstream import contracts, topics
from anonstream.risk import pitman, uniqueness
from anonstream.runtime.metrics import ServiceMetrics
from anonstream.stages.audit import AuditStage
from anonstream.stages.base import InputMessage, StageDriver
from anonstream.stores.base import InMemoryCounters
from anonstream.stores.risk import InMemoryRiskTables

VERSION = "v-test"
N = 1e20


def log_record(doc: str, index: int, digest: str | None, action: str = "untouched",
               after: dict | None = None, version: str = VERSION) -> dict:
    """A swap-log record (schemas/swap-log.v1.json) with synthetic digests and values."""
    return {
        "schema": "swap-log.v1", "release": {"schema": "release.v1", "name": "test", "version": version},
        "doc_id": doc, "chunk_index": index, "chunk_key": f"{doc}#{index}", "pool": "unclustered",
        "action": action, "reason": "selected" if action != "untouched" else "not_selected", "rare": False,
        "seen_count": 0, "tuple_digest": digest, "pair_id": None, "partner": None, "categories": [],
        "tuple_before": {"ORG": f"org {digest}"}, "tuple_after": after if after is not None else {"ORG": f"org {digest}"},
        "changes": [], "released_at": 1.0,
    }


def sanitized(doc: str, index: int, count: int) -> dict:
    return {"doc_id": doc, "chunk_index": index, "chunk_count": count, "entities": [{"type": "ORG"}], "changes": []}


def stage(**kw) -> AuditStage:
    return AuditStage(InMemoryCounters(), InMemoryRiskTables(), clock=lambda: 123.0, release_version=VERSION,
                      swapped=("ORG",), **kw)


def feed(audit: AuditStage, records: list[dict]) -> None:
    """Swap-log records through the driver (so they are validated against their schema)."""
    driver = StageDriver(audit, "t")
    name = topics.name(topics.SWAP_LOG, "t")
    handled = driver.handle([InputMessage(name, 0, i, b"k", orjson.dumps(r)) for i, r in enumerate(records)])
    assert not handled.dead_letters, [d.value["error_message"] for d in handled.dead_letters]


def no_nan(obj) -> bool:
    if isinstance(obj, float):
        return math.isfinite(obj)
    if isinstance(obj, dict):
        return all(no_nan(v) for v in obj.values())
    if isinstance(obj, list):
        return all(no_nan(v) for v in obj)
    return True


# class sizes before: a x3, b x2, c, d, e, f singletons (s1 = 4, n = 9); c and d swapped, e generalized
# after the swap, one released tuple shared by c and d ("x"), the others keep their own
RECORDS = (
    [log_record("A", i, "a") for i in range(3)] + [log_record("B", i, "b") for i in range(2)]
    + [log_record("C", 0, "c", "swapped", {"ORG": "x"}), log_record("D", 0, "d", "swapped", {"ORG": "x"}),
       log_record("E", 0, "e", "generalized", {"ORG": "a company"}), log_record("F", 0, "f"),
       log_record("G", 0, None, after={})]
)


def test_snapshot_matches_a_direct_pitman_computation():
    audit = stage()
    audit.process([(topics.CHUNKS_SANITIZED, sanitized("A", 0, 1))])
    feed(audit, RECORDS)
    snap = audit.report()
    contracts.validate(topics.AUDIT_METRICS.schema, snap)
    assert snap["chunks"] == 1 and snap["documents"] == 1
    r = snap["risk"][VERSION]["all_time"]
    sizes = [3, 2, 1, 1, 1, 1]
    fit = pitman.fit_pitman(sizes)
    assert r["n"] == 9 and r["classes_before"] == 6 and r["sample_uniques_before"] == 4
    assert r["swapped_uniques"] == 3
    assert r["theta"] == pytest.approx(fit.theta) and r["alpha"] == pytest.approx(fit.alpha)
    assert r["p_hat"] == pytest.approx(fit.p_hat(N))
    assert r["dr"] == pytest.approx(pitman.disclosure_risk(fit, 3, N))
    assert r["dr"] == pytest.approx(1 - 3 / 4 * fit.p_hat(N))
    assert r["swapped_unique_share"] == 0.75 and r["uniques_kept_share"] == 0.25      # f kept; c, d, e changed
    models = r["population_uniqueness"]
    assert models["pitman"]["p_hat"] == pytest.approx(r["p_hat"]) and models["pitman"]["dr"] == pytest.approx(r["dr"])
    zayatz_p = uniqueness.zayatz_conditional(sizes, N)
    assert models["zayatz"]["p_hat"] == pytest.approx(zayatz_p) and models["zayatz"]["dr"] == pytest.approx(1 - 0.75 * zayatz_p)
    assert models["dankar_model"] == "pitman"        # n / N = 9e-20 <= 0.1: Dankar's rule takes Pitman
    # released: A-tuple x3, B-tuple x2, x x2 (c, d), "a company", f: k = 1, two singletons
    assert r["classes_after"] == 5 and r["sample_uniques_after"] == 2 and r["k"] == 1
    assert r["k_distribution"] == {"1": 2, "2": 2, "3": 1}
    assert r["l"] == 1 and r["l_distribution"] == {"1": 4, "2": 1}   # x holds chunks of documents C and D
    assert snap["alerts"] == [] and no_nan(snap)
    m = audit.metrics()
    assert m["risk_dr"] == {VERSION: r["dr"]} and m["risk_s1_over_n"] == {VERSION: pytest.approx(4 / 9)}
    assert m["risk_min_k"] == {VERSION: 1} and m["risk_alpha"] == {VERSION: r["alpha"]}


def test_redelivered_records_count_once():
    audit = stage()
    feed(audit, RECORDS)
    first = audit.report()["risk"][VERSION]
    feed(audit, RECORDS[:4] + [RECORDS[5]])
    again = audit.report()["risk"][VERSION]
    assert again == first and again["all_time"]["n"] == 9 and again["window"]["n"] == 9


def test_alerts_on_low_thresholds_and_none_on_defaults():
    audit = stage(max_dr=0.0, min_k=2)
    feed(audit, RECORDS)
    snap = audit.tick(1000.0)[0].value
    contracts.validate(topics.AUDIT_METRICS.schema, snap)
    assert {a["scope"] for a in snap["alerts"]} == {"all_time", "window"}   # the window holds every record here
    kinds = {a["kind"]: a for a in snap["alerts"] if a["scope"] == "all_time"}
    assert set(kinds) == {"dr", "k"}
    assert kinds["dr"]["value"] == snap["risk"][VERSION]["all_time"]["dr"] > 0.0 and kinds["dr"]["threshold"] == 0.0
    assert kinds["k"] == {"kind": "k", "scope": "all_time", "release_version": VERSION, "value": 1, "threshold": 2}
    quiet = stage()
    feed(quiet, RECORDS)
    assert quiet.report()["alerts"] == []


@pytest.mark.parametrize("records", [
    [],                                                                   # no data
    [log_record("G", 0, None, after={})],                                 # only chunks without values on J
    [log_record("A", i, "a") for i in range(4)],                          # one class
    [log_record("A", 0, "a")],                                            # one chunk
    [log_record(f"D{i}", 0, f"u{i}", "swapped") for i in range(5)],       # all singletons, all swapped
    [log_record(f"D{i}", 0, f"u{i}") for i in range(5)],                  # all singletons, none swapped
])
def test_edge_cases_never_nan_nor_raise(records):
    audit = stage(max_dr=0.5, min_k=2)
    feed(audit, records)
    emits = audit.tick(1000.0)
    snap = emits[0].value
    contracts.validate(topics.AUDIT_METRICS.schema, snap)
    assert no_nan(snap) and no_nan(audit.metrics())
    for entry in snap["risk"].values():
        assert "error" not in entry
        r = entry["all_time"]
        if r["sample_uniques_before"] == 0:
            assert r["dr"] is None and r["p_hat"] is None
    if len(records) == 5 and records[0]["action"] == "swapped":
        r = snap["risk"][VERSION]["all_time"]
        assert r["boundary"] == "singletons" and r["theta"] is None and r["alpha"] == 1.0
        assert r["p_hat"] == pytest.approx(1.0) and r["dr"] == pytest.approx(0.0)
    if len(records) == 5 and records[0]["action"] == "untouched":
        assert snap["risk"][VERSION]["all_time"]["dr"] == 1.0


def test_versions_are_separate_and_unknown_versions_use_the_whole_tuple():
    audit = stage()
    records = [log_record(d, 0, "a", after={"ORG": "o", "DATETIME": d}, version=v)
               for v in (VERSION, "other") for d in ("2001", "2002")]
    feed(audit, records)
    risk = {v: e["all_time"] for v, e in audit.report()["risk"].items()}
    assert set(risk) == {VERSION, "other"} and risk[VERSION]["n"] == 2 and risk["other"]["n"] == 2
    assert risk[VERSION]["classes_after"] == 1 and risk[VERSION]["k"] == 2    # restricted to J = (ORG,)
    assert risk["other"]["classes_after"] == 2 and risk["other"]["k"] == 1    # whole tuple_after


def test_gauges_go_through_the_service_exposition():
    audit = stage()
    feed(audit, RECORDS)
    audit.tick(1000.0)
    text = ServiceMetrics("audit", "0").exposition(audit.metrics())
    dr = audit.report()["risk"][VERSION]["all_time"]["dr"]
    line = next(x for x in text.splitlines() if x.startswith("anonstream_audit_risk_dr{"))
    assert f'key="{VERSION}"' in line and float(line.rsplit(" ", 1)[1]) == pytest.approx(dr)
    assert any(x.startswith("anonstream_audit_risk_theta{") for x in text.splitlines())


def test_decision_reasons_are_counted_by_reason():
    audit = stage()
    record = sanitized("A", 0, 1)
    record["entities"] = [{"type": "ORG", "decision": "common(k=20)"}, {"type": "LOC", "decision": "common(k=21)"},
                          {"type": "ORG", "decision": None}]
    audit.process([(None, record)])
    assert audit.report()["decisions"] == {"common": 2}
    assert audit.metrics()["decisions"] == {"common": 2}
