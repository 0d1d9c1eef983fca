"""The audit stage's sliding-window risk tables (event-time buckets, expiry, idempotent redelivery), DU
(paper 000 eq. 2.19) from the cluster stage's fields and re-embedded released text, the attacker's
accuracy before vs after the swap, and their gauges."""
from __future__ import annotations

import math

import numpy as np
import orjson
import pytest

from anonstream import contracts, topics
from anonstream.mixture.families import log_density
from anonstream.mixture.model import SphericalMixture
from anonstream.runtime.metrics import ServiceMetrics
from anonstream.stages.audit import AuditStage
from anonstream.stages.audit_attack import AttackMonitor, undo_changes
from anonstream.stages.base import InputMessage, StageDriver
from anonstream.stores.base import InMemoryCounters, InMemoryModelRegistry
from anonstream.stores.risk import InMemoryRiskTables, RiskObservation

from test_audit_risk import VERSION, log_record


def at(record: dict, t: float) -> dict:
    return {**record, "released_at": t}


def feed(audit: AuditStage, topic, records: list[dict]) -> None:
    driver = StageDriver(audit, "t")
    name = topics.name(topic, "t")
    handled = driver.handle([InputMessage(name, 0, i, b"k", orjson.dumps(r)) for i, r in enumerate(records)])
    assert not handled.dead_letters, [d.value["error_message"] for d in handled.dead_letters]


def stage(tables=None, **kw) -> AuditStage:
    return AuditStage(InMemoryCounters(), tables or InMemoryRiskTables(window_s=30, bucket_s=10),
                      clock=lambda: 123.0, release_version=VERSION, swapped=("ORG",), **kw)


# window 30 s in 10 s buckets: with the watermark at t = 45 (bucket 4) the live buckets are 2, 3, 4
TIMED = [at(log_record("A", 0, "a"), 5.0), at(log_record("B", 0, "a"), 15.0),
         at(log_record("C", 0, "c", "swapped", {"ORG": "x"}), 25.0), at(log_record("D", 0, "d"), 45.0)]


def test_window_holds_the_live_buckets_and_all_time_everything():
    audit = stage()
    feed(audit, topics.SWAP_LOG, TIMED)
    entry = audit.report()["risk"][VERSION]
    assert entry["all_time"]["n"] == 4 and entry["all_time"]["classes_before"] == 3
    w = entry["window"]
    assert w["n"] == 2 and w["sample_uniques_before"] == 2 and w["swapped_uniques"] == 1   # C and D
    assert (w["start"], w["end"], w["seconds"]) == (20.0, 50.0, 30.0)
    assert sorted(audit.risk_tables._buckets[VERSION]) == [2, 4]            # buckets 0 and 1 deleted


def test_window_is_idempotent_and_late_records_count_in_all_time_only():
    audit = stage()
    feed(audit, topics.SWAP_LOG, TIMED)
    first = audit.report()["risk"][VERSION]
    feed(audit, topics.SWAP_LOG, TIMED[::-1])                               # redelivered, other order
    assert audit.report()["risk"][VERSION] == first
    feed(audit, topics.SWAP_LOG, [at(log_record("E", 0, "e"), 12.0)])        # bucket 1: out of the window
    again = audit.report()["risk"][VERSION]
    assert again["all_time"]["n"] == 5 and again["window"] == first["window"]
    replay = stage()
    feed(replay, topics.SWAP_LOG, TIMED + [at(log_record("E", 0, "e"), 12.0)])  # a replay: same windows
    assert replay.report()["risk"][VERSION] == again


def test_window_follows_the_watermark_until_it_is_empty_of_old_buckets():
    tables = InMemoryRiskTables(window_s=30, bucket_s=10)
    obs = [RiskObservation(f"k{i}", f"t{i}", "x", "doc", False, at=float(t)) for i, t in enumerate([0, 9, 31, 100])]
    tables.observe("v", obs[:2])
    assert sum(tables.window("v").table.before.values()) == 2
    tables.observe("v", obs[2:3])                                           # bucket 3: bucket 0 drops out
    assert tables.window("v").table.before == {"t2": 1} and tables.window("v").start == 10.0
    tables.observe("v", obs[3:])
    assert tables.window("v").table.before == {"t3": 1} and sum(tables.table("v").before.values()) == 4
    assert tables.window("other").start is None and tables.window("other").table.before == {}


# DU: a 2-component PKB mixture on S^2; the fake embedder maps a released text to a fixed unit vector
MIXTURE = SphericalMixture("pkb", mu=np.array([[1.0, 0, 0], [0, 1.0, 0]]), rho=np.array([0.6, 0.5]),
                           pi=np.array([0.7, 0.3]), n_train=100, train_loglik=0.0, created_at=0.0)


def unit(v) -> np.ndarray:
    v = np.asarray(v, dtype=np.float64)
    return v / np.linalg.norm(v)


class FakeEmbedder:
    def __init__(self, vectors: dict[str, np.ndarray]):
        self.vectors = vectors
        self.calls = 0

    def encode(self, texts):
        self.calls += 1
        return np.asarray([self.vectors[t] for t in texts], dtype=np.float32)


def sanitized_chunk(doc: str, x: np.ndarray, text: str, changed: bool, model_version: int,
                    metadata: dict | None = None) -> dict:
    labels, posterior, logd = MIXTURE.assign(np.asarray([x], dtype=np.float32))
    return {
        "doc_id": doc, "chunk_index": 0, "chunk_count": 1, "text": text, "doc_start": 0, "sentence_count": 1,
        "metadata": metadata or {}, "lineage": {"swap": "1"}, "entities": [],
        "cluster": {"model_version": model_version, "component": int(labels[0]), "posterior": float(posterior[0]),
                    "log_density": float(logd[0])},
        "changes": [{"start": 0, "end": 3, "operator": "swap"}] if changed else [],
        "release": {"schema": "release.v1", "name": "test", "version": VERSION},
    }


def test_du_is_the_ratio_of_component_log_densities_after_and_before():
    registry = InMemoryModelRegistry()
    mv = registry.publish(MIXTURE.to_bytes(), {})
    xs = {"d1": unit([1, 0.1, 0]), "d2": unit([0.1, 1, 0.2]), "d3": unit([1, 1, 1])}
    after = {"t1": unit([1, 0.5, 0.3]), "t2": unit([0.3, 1, 0.6]), "t3": unit([0, 0, 1])}
    embedder = FakeEmbedder(after)
    audit = stage(embedder=embedder, registry=registry)
    records = [sanitized_chunk("d1", xs["d1"], "t1", True, mv), sanitized_chunk("d2", xs["d2"], "t2", True, mv),
               sanitized_chunk("d3", xs["d3"], "t3", False, mv)]                    # d3 unchanged: not in DU
    feed(audit, topics.CHUNKS_SANITIZED, records)
    assert embedder.calls == 1                                                     # one batch
    labels = [r["cluster"]["component"] for r in records[:2]]
    before = sum(log_density(xs[d][None, :], MIXTURE.mu, MIXTURE.rho, "pkb")[0, l] for d, l in zip(("d1", "d2"), labels))
    after_sum = sum(log_density(after[t][None, :], MIXTURE.mu, MIXTURE.rho, "pkb")[0, l]
                    for t, l in zip(("t1", "t2"), labels))
    snap = audit.report()
    contracts.validate(topics.AUDIT_METRICS.schema, snap)
    u = snap["risk"][VERSION]["utility"]
    assert u["changed_chunks"] == 2
    assert u["loglik_before"] == pytest.approx(before, rel=1e-5) and u["loglik_after"] == pytest.approx(after_sum, rel=1e-5)
    assert u["du"] == pytest.approx(after_sum / before, rel=1e-5) and u["du"] < 1.0 and u["regime"] == "ratio"
    assert u["by_mixture_version"][str(mv)]["du"] == u["du"]
    feed(audit, topics.CHUNKS_SANITIZED, records)                                     # redelivered: counted once
    assert audit.report()["risk"][VERSION]["utility"] == u
    assert audit.metrics()["risk_du"] == {VERSION: u["du"]}


def test_du_scores_a_deterministic_hash_sample_of_the_changed_chunks():
    from anonstream.stages.audit import in_sample

    keys = [f"doc{i}|0" for i in range(4000)]
    share = sum(in_sample(k, 0.1) for k in keys) / len(keys)
    assert 0.08 < share < 0.12                                                    # a tenth, give or take
    assert [in_sample(k, 0.1) for k in keys] == [in_sample(k, 0.1) for k in keys]  # the same keys every time
    assert all(in_sample(k, 1.0) for k in keys)
    registry = InMemoryModelRegistry()
    mv = registry.publish(MIXTURE.to_bytes(), {})
    texts = {f"t{i}": unit([1, 0.1 * i, 0]) for i in range(40)}
    embedder = FakeEmbedder(texts)
    audit = stage(embedder=embedder, registry=registry, utility_sample=0.25)
    records = [sanitized_chunk(f"d{i}", unit([1, 0.1 * i, 0.2]), f"t{i}", True, mv) for i in range(40)]
    feed(audit, topics.CHUNKS_SANITIZED, records)
    expected = sum(in_sample(f"d{i}|0", 0.25) for i in range(40))
    assert 0 < expected < 40
    assert audit.report()["risk"][VERSION]["utility"]["changed_chunks"] == expected
    with pytest.raises(ValueError):
        stage(utility_sample=0.0)


def test_du_leaves_out_chunks_of_a_mixture_version_the_registry_no_longer_keeps():
    registry = InMemoryModelRegistry()
    registry.publish(MIXTURE.to_bytes(), {})
    audit = stage(embedder=FakeEmbedder({"t": unit([1, 0, 0])}), registry=registry)
    feed(audit, topics.CHUNKS_SANITIZED, [sanitized_chunk("d", unit([1, 0, 0]), "t", True, model_version=7)])
    snap = audit.report()
    assert snap["utility_unscored"] == 1 and snap["risk"] == {}


class KeywordAttacker:
    """Predicts ACME when the text names Acme, else OTHER."""
    kind = "stub"

    def predict(self, texts):
        return ["ACME" if "Acme" in t else "OTHER" for t in texts]


def test_undo_changes_puts_the_old_values_back():
    text = "Beta Ltd met Gamma in Oslo."
    changes = [{"start": 0, "end": 8, "old": "Acme Inc"}, {"start": 22, "end": 26, "old": "Paris"}]
    assert undo_changes(text, changes) == "Acme Inc met Gamma in Paris."


def test_attack_accuracy_before_and_after_the_swap_in_either_arrival_order():
    audit = stage(attack=AttackMonitor(KeywordAttacker(), label_key="ticker"))
    meta = {"ticker": "ACME"}
    changed = [sanitized_chunk(f"c{i}", unit([1, 0, 0]), "Beta met us.", True, 1, meta) for i in range(3)]
    kept = sanitized_chunk("k", unit([1, 0, 0]), "Acme met us.", False, 1, meta)
    unlabelled = sanitized_chunk("u", unit([1, 0, 0]), "Acme met us.", False, 1)
    logs = [{**log_record(f"c{i}", 0, "a", "swapped"), "changes": [
        {"start": 0, "end": 4, "category": "ORG", "operator": "swap", "old": "Acme", "new": "Beta"}]} for i in range(3)]
    feed(audit, topics.SWAP_LOG, logs[:1])                                  # log first, chunk later
    feed(audit, topics.CHUNKS_SANITIZED, changed + [kept, unlabelled])
    assert audit.report()["attack"]["chunks"] == 2                          # c1, c2 wait for their logs
    feed(audit, topics.SWAP_LOG, logs[1:] + logs[1:])                       # redelivered logs: no effect
    feed(audit, topics.CHUNKS_SANITIZED, [kept])
    snap = audit.report()
    contracts.validate(topics.AUDIT_METRICS.schema, snap)
    a = snap["attack"]
    assert a["chunks"] == 4 and a["accuracy_before"] == 1.0 and a["accuracy_after"] == 0.25
    assert (a["mcnemar_b"], a["mcnemar_c"]) == (3, 0) and a["mcnemar_p"] == pytest.approx(0.25)
    assert a["relative_drop"] == pytest.approx(0.75)
    assert audit.metrics()["attack_accuracy_after"] == 0.25


def test_gauges_for_window_du_k_classes_and_attack_in_the_exposition():
    registry = InMemoryModelRegistry()
    mv = registry.publish(MIXTURE.to_bytes(), {})
    audit = stage(embedder=FakeEmbedder({"t": unit([1, 0.4, 0.2])}), registry=registry,
                  attack=AttackMonitor(KeywordAttacker()))
    feed(audit, topics.SWAP_LOG, TIMED)
    feed(audit, topics.CHUNKS_SANITIZED, [sanitized_chunk("d", unit([1, 0, 0.1]), "t", True, mv, {"ticker": "X"}),
                                          sanitized_chunk("e", unit([1, 0, 0.1]), "t", False, mv, {"ticker": "X"})])
    audit.tick(1000.0)
    text = ServiceMetrics("audit", "0").exposition(audit.metrics())
    risk = audit.report()["risk"][VERSION]

    def value(name: str, key: str) -> float:
        line = next(x for x in text.splitlines() if x.startswith(name + "{") and f'key="{key}"' in x)
        return float(line.rsplit(" ", 1)[1])

    assert value("anonstream_audit_risk_window_n", VERSION) == 2 and value("anonstream_audit_risk_n", VERSION) == 4
    assert value("anonstream_audit_risk_window_dr", VERSION) == pytest.approx(risk["window"]["dr"])
    assert value("anonstream_audit_risk_du", VERSION) == pytest.approx(risk["utility"]["du"])
    assert value("anonstream_audit_risk_k_classes", f"{VERSION}|1") == 2           # released: a x2, x, d
    assert value("anonstream_audit_risk_k_classes", f"{VERSION}|2") == 1
    assert any(x.startswith("anonstream_audit_attack_accuracy_before{") for x in text.splitlines())
    assert all(math.isfinite(float(x.rsplit(" ", 1)[1])) for x in text.splitlines() if not x.startswith("#"))


def test_du_of_negative_sums_keeps_its_meaning_and_no_change_is_null():
    from anonstream.stages.audit import utility_of
    from anonstream.stores.risk import UtilitySums

    u = utility_of({1: UtilitySums(1, -2.0, -3.0), 2: UtilitySums(1, 4.0, 2.0)})
    assert u["du"] == pytest.approx((-3.0 + 2.0) / (-2.0 + 4.0)) and u["regime"] == "ratio" and u["changed_chunks"] == 2
    assert u["by_mixture_version"]["1"]["du"] == pytest.approx(0.5) and u["by_mixture_version"]["1"]["regime"] == "abs"
    assert utility_of({})["du"] is None
