"""audit: counts on what is released, for dashboards (records, entities per type, dead letters
per stage), and the swap risk of each release version (paper 000 §2.4) from running tables fed by
the swap log. Counts, digests and estimates only, never text.

Risk tables (``stores/risk.py``): the class sizes of z_J before sanitization are the counts of the
swap log's ``tuple_digest`` (chunks without values on J, digest null, are left out); a released tuple is
the swap log's ``tuple_after`` restricted to the release's J (when the record's release version is the
configured one; otherwise the whole ``tuple_after``, and ``released_tuple`` says "all").
On each snapshot: n, K, s1, the Ewens-Pitman fit (eq. 2.10), p_hat for the superpopulation size N
(eq. 2.14-2.15), DR = 1 - (#swapped uniques / s1) p_hat (eq. 2.16), k-anonymity and l-diversity
(w.r.t. the document) of the released tuples. Undefined values are null, never NaN.
"""
from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from collections import Counter
from typing import Any, Sequence

import numpy as np

from .. import topics
from ..risk import pitman
from ..risk.kanon import KAnonymity, LDiversity
from ..stores.base import Counters, StoreUnavailable
from ..stores.risk import InMemoryRiskTables, RiskObservation, RiskTables
from .base import Emit, Stage

log = logging.getLogger(__name__)

DEFAULT_POPULATION = 1e20
_SWAPPED_ACTIONS = ("swapped", "generalized")


def _digest(obj: Any, length: int = 24) -> str:
    canonical = json.dumps(obj, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:length]


def _finite(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and math.isfinite(x) else None


def risk_of(table, population: float = DEFAULT_POPULATION) -> dict[str, Any]:
    """Risk summary of one version's tables (see the module docstring); never raises on edge cases."""
    before = [c for c in table.before.values() if c > 0]
    after = [c for c in table.after.values() if c > 0]
    n = sum(before)
    s1 = sum(1 for c in before if c == 1)
    swapped_uniques = sum(1 for d, c in table.before.items() if c == 1 and table.swapped.get(d, 0) > 0)
    out: dict[str, Any] = {
        "n": n, "classes_before": len(before), "sample_uniques_before": s1,
        "n_released": sum(after), "classes_after": len(after), "sample_uniques_after": sum(1 for c in after if c == 1),
        "swapped_uniques": swapped_uniques, "s1_over_n": s1 / n if n else None,
        "theta": None, "alpha": None, "boundary": None, "population": None, "p_hat": None, "dr": None,
        "k": None, "k_distribution": {}, "l": None, "entropy_l": None, "l_distribution": {},
    }
    if after:
        dist = Counter(after)
        kan = KAnonymity(k=min(after), n=sum(after), classes=len(after), distribution=dict(sorted(dist.items())))
        out["k"], out["k_distribution"] = kan.k, kan.as_dict()["distribution"]
        docs: dict[str, list[int]] = {}
        for pair, c in table.after_docs.items():
            if c > 0:
                docs.setdefault(pair.rpartition("|")[0], []).append(c)
        if docs:
            distinct = [len(v) for v in docs.values()]
            entropies = []
            for v in docs.values():
                total = sum(v)
                entropies.append(-sum(c / total * math.log(c / total) for c in v))
            ld = LDiversity(l=min(distinct), entropy_l=math.exp(min(entropies)), classes=len(distinct),
                            distribution=dict(sorted(Counter(distinct).items())))
            out["l"], out["entropy_l"], out["l_distribution"] = ld.l, _finite(ld.entropy_l), ld.as_dict()["distribution"]
    if n == 0:
        return out
    N = max(float(population), float(n))
    out["population"] = N
    if len(before) == 1 and n >= 2:
        out["boundary"] = "one_class"       # not identifiable, no sample uniques: p_hat and DR undefined
        return out
    try:
        fit = pitman.fit_pitman(before)
        out["theta"], out["alpha"], out["boundary"] = _finite(fit.theta), _finite(fit.alpha), fit.boundary
        if s1 > 0:
            out["p_hat"] = _finite(fit.p_hat(N))
            out["dr"] = _finite(pitman.disclosure_risk(fit, swapped_uniques, N))
    except (ValueError, RuntimeError, ArithmeticError, np.linalg.LinAlgError) as exc:
        log.warning("audit: Pitman fit failed (%s, n=%d, K=%d)", type(exc).__name__, n, len(before))
        out["boundary"] = "fit_failed"
    return out


class AuditStage(Stage):
    name = "audit"
    version = "2"
    inputs = (topics.CHUNKS_SANITIZED, topics.DEAD_LETTER, topics.SWAP_LOG)

    def __init__(self, counters: Counters, risk_tables: RiskTables | None = None, snapshot_every_s: float = 10.0,
                 clock=time.time, release_version: str | None = None, swapped: Sequence[str] | None = None,
                 population: float = DEFAULT_POPULATION, max_dr: float = 1.0, min_k: int = 1):
        self.counters = counters
        self.risk_tables = risk_tables if risk_tables is not None else InMemoryRiskTables()
        self.snapshot_every_s = snapshot_every_s
        self.clock = clock
        self.release_version = release_version
        self.swapped = tuple(swapped) if swapped is not None else None
        self.population = population
        self.max_dr = max_dr
        self.min_k = min_k
        self._last_snapshot = 0.0
        self._last_risk: dict[str, dict[str, Any]] = {}

    def _observation(self, record: dict[str, Any]) -> tuple[str, RiskObservation] | None:
        before = record.get("tuple_digest")
        if before is None:
            return None
        version = record["release"]["version"]
        after = record.get("tuple_after") or {}
        restricted = self.swapped is not None and version == self.release_version
        if restricted:
            after = {c: v for c, v in after.items() if c in self.swapped}
        return version, RiskObservation(chunk_key=record["chunk_key"], before=before, after=_digest(after),
                                        doc=_digest(record["doc_id"], 16),
                                        swapped=record.get("action") in _SWAPPED_ACTIONS)

    def process(self, items: Sequence[tuple[Any, dict[str, Any]]]) -> list[list[Emit] | Exception]:
        deltas: dict[str, int] = {}
        observed: dict[str, list[RiskObservation]] = {}

        def bump(name: str, by: int = 1) -> None:
            deltas[name] = deltas.get(name, 0) + by

        for topic, record in items:
            if topic is topics.DEAD_LETTER:
                bump(f"dead_letters.{record['stage']}")
                continue
            if topic is topics.SWAP_LOG:
                got = self._observation(record)
                if got is not None:
                    observed.setdefault(got[0], []).append(got[1])
                continue
            bump("chunks")
            if record["chunk_index"] == record["chunk_count"] - 1:
                bump("documents")
            for entity in record["entities"]:
                bump(f"entities.{entity['type']}")
                if entity.get("surrogate") is not None:
                    bump(f"replaced.{entity['type']}")
            for change in record["changes"]:
                bump(f"operators.{change['operator']}")
        for version, observations in observed.items():
            self.risk_tables.observe(version, observations)
        self.counters.incr(deltas)
        return [[] for _ in items]

    def _risk(self) -> dict[str, dict[str, Any]]:
        risk: dict[str, dict[str, Any]] = {}
        for version in self.risk_tables.versions():
            try:
                risk[version] = risk_of(self.risk_tables.table(version), self.population)
            except StoreUnavailable:
                raise
            except Exception as exc:  # noqa: BLE001 - a failed fit must not take the snapshot down
                log.warning("audit: risk of a release version failed (%s)", type(exc).__name__)
                risk[version] = {"error": type(exc).__name__}
        return risk

    def _alerts(self, risk: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
        alerts = []
        for version, r in risk.items():
            dr, k = r.get("dr"), r.get("k")
            if dr is not None and dr > self.max_dr:
                alerts.append({"kind": "dr", "release_version": version, "value": dr, "threshold": self.max_dr})
                log.warning("audit alert: DR %.6f > %.6f (n=%d, s1=%d)", dr, self.max_dr, r["n"],
                            r["sample_uniques_before"])
            if k is not None and k < self.min_k:
                alerts.append({"kind": "k", "release_version": version, "value": k, "threshold": self.min_k})
                log.warning("audit alert: k %d < %d (n=%d)", k, self.min_k, r["n_released"])
        return alerts

    def report(self) -> dict[str, Any]:
        """The current snapshot (schemas/audit-metrics.v1.json)."""
        counts = self.counters.snapshot()

        def group(prefix: str) -> dict[str, int]:
            return {k[len(prefix):]: v for k, v in sorted(counts.items()) if k.startswith(prefix)}

        risk = self._risk()
        self._last_risk = risk
        return {
            "emitted_at": self.clock(),
            "chunks": counts.get("chunks", 0),
            "documents": counts.get("documents", 0),
            "entities_by_type": group("entities."),
            "replaced_by_type": group("replaced."),
            "dead_letters_by_stage": group("dead_letters."),
            "operators": group("operators."),
            "risk": risk,
            "alerts": self._alerts(risk),
        }

    def metrics(self) -> dict[str, Any]:
        """Gauges of the last snapshot, one series per release version (label ``key``)."""
        out: dict[str, dict[str, float]] = {}
        for name, field_ in (("risk_dr", "dr"), ("risk_s1_over_n", "s1_over_n"), ("risk_theta", "theta"),
                             ("risk_alpha", "alpha"), ("risk_min_k", "k"), ("risk_l", "l"), ("risk_n", "n"),
                             ("risk_sample_uniques", "sample_uniques_before"),
                             ("risk_swapped_uniques", "swapped_uniques")):
            values = {v: r[field_] for v, r in self._last_risk.items() if r.get(field_) is not None}
            if values:
                out[name] = values
        return out

    def tick(self, now: float) -> list[Emit]:
        if now - self._last_snapshot < self.snapshot_every_s:
            return []
        self._last_snapshot = now
        try:
            value = self.report()
        except StoreUnavailable as exc:
            log.warning("audit: snapshot skipped, store unavailable (%s)", type(exc).__name__)
            return []
        key = f"audit|{int(now)}"
        return [Emit(topics.AUDIT_METRICS, key, "audit", value)]
