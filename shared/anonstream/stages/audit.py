"""audit: counts on what is released, for dashboards (records, entities per type, dead letters
per stage), the swap risk and utility of each release version (paper 000 §2.4-2.5), and, with a reference
corpus, an attacker's accuracy before and after the swap. Counts, digests and estimates only, never text.

Risk tables (``stores/risk.py``): the class sizes of z_J before sanitization are the counts of the
swap log's ``tuple_digest`` (chunks without values on J, digest null, are left out); a released tuple is
the swap log's ``tuple_after`` restricted to the release's J (when the record's release version is the
configured one; otherwise the whole ``tuple_after``, and ``released_tuple`` says "all"). The tables are
kept over all time and over a sliding window of event time (the swap log's ``released_at``).
On each snapshot, for ``all_time`` and for ``window``: n, K, s1, the Ewens-Pitman fit (eq. 2.10), p_hat for
the superpopulation size N (eq. 2.14-2.15), DR = 1 - (#swapped uniques / s1) p_hat (eq. 2.16), what DR is
made of (``swapped_unique_share``; ``uniques_kept_share``, the sample uniques neither swapped nor generalized),
the population uniques of the Pitman, Zayatz and SNB models with Dankar's choice (``population_uniqueness``),
k-anonymity and l-diversity (w.r.t. the document) of the released tuples. Undefined values are null, never NaN.

Utility (eq. 2.17-2.19): DU = sum log f(x~ | l, phi) / sum log f(x | l, phi) over the changed chunks (a
sanitized chunk with ``changes``), f the component density (eq. 2.1/2.2) of the chunk's component l under
the mixture version that assigned it (``cluster.model_version``). The sanitized topic carries no embedding,
but it needs none for the denominator: the cluster stage put the posterior of l and the log mixture density
of x on the chunk, and log f(x | l, phi) = log posterior_l + log sum_k pi_k f(x | phi_k) - log pi_l (§2.2.1).
The numerator re-embeds the released texts of the changed chunks (one encoder call per batch). Re-embedding
costs as much as the embed stage itself, so only a fixed share of the changed chunks is scored
(``utility_sample``; which ones is decided by a hash of the chunk key, so a redelivered chunk is in or out
again, and the share is the same in every replica): both sums then run over a uniform sample of the changed
chunks, and their ratio estimates the DU of all of them. The embed stage gives a vector to every chunk of that
sample the release may change (``stages.embed.needs_vector``: same hash, same share), so no changed chunk of the
sample misses its cluster and the estimate stays that of a uniform sample; a changed chunk of the sample that
arrives without one anyway (an embed stage run with a smaller share) is counted as ``utility.unscored``. Both sums
are running sums in the risk store, so DU is restart-safe.
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
from ..risk import pitman, uniqueness
from ..risk.kanon import KAnonymity, LDiversity
from ..risk.utility import du_from_sums
from ..sampling import in_sample, sample_key
from ..stores.base import Counters, ModelRegistry, StoreUnavailable
from ..stores.lease import LeaderElection
from ..stores.risk import InMemoryRiskTables, RiskObservation, RiskTables, UtilityObservation, UtilitySums
from .audit_attack import AttackMonitor
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
        "swapped_unique_share": swapped_uniques / s1 if s1 else None,
        "uniques_kept_share": (s1 - swapped_uniques) / s1 if s1 else None,
        "theta": None, "alpha": None, "boundary": None, "population": None, "p_hat": None, "dr": None,
        "population_uniqueness": None,
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
    out["population_uniqueness"] = population_uniqueness_of(before, N, out["swapped_unique_share"])
    return out


def population_uniqueness_of(before: list[int], population: float, swapped_share: float | None) -> dict[str, Any]:
    """Pitman, Zayatz and SNB population uniques (``risk.uniqueness``), each with its p_hat and the DR of
    eq. 2.16 with that p_hat, and the model Dankar's rule picks."""
    est = uniqueness.estimate_population_uniqueness(before, population).as_dict()
    for name in uniqueness.MODELS:
        p = est[name]["p_hat"]
        est[name]["dr"] = None if p is None or swapped_share is None else _finite(1.0 - swapped_share * p)
        est[name] = {k: _finite(v) for k, v in est[name].items()}
    return est


def utility_of(sums: dict[int, UtilitySums]) -> dict[str, Any]:
    """DU (eq. 2.19) from the running sums, over all mixture versions and per version, by
    ``risk.utility.du_from_sums`` (the planner's: L_after / L_before when L_before > 0, the sign-safe form
    otherwise, ``regime`` says which); null when no chunk changed."""
    def entry(s: UtilitySums) -> dict[str, Any]:
        du, regime = du_from_sums(s.after, s.before, s.chunks)
        return {"changed_chunks": s.chunks, "loglik_before": _finite(s.before), "loglik_after": _finite(s.after),
                "du": _finite(du), "regime": regime}

    total = UtilitySums()
    for s in sums.values():
        total.chunks, total.before, total.after = total.chunks + s.chunks, total.before + s.before, total.after + s.after
    return {**entry(total), "by_mixture_version": {str(mv): entry(s) for mv, s in sorted(sums.items())}}


def log_component_density_before(cluster: dict[str, Any], pi: np.ndarray) -> float:
    """log f(x | l, phi) of the embedded chunk from what the cluster stage recorded (§2.2.1, eq. 2.3):
    posterior_l = pi_l f(x | phi_l) / sum_k pi_k f(x | phi_k), so log f(x | phi_l) = log posterior_l +
    log_density - log pi_l."""
    return math.log(cluster["posterior"]) + cluster["log_density"] - math.log(pi[cluster["component"]])


K_BINS = ((1, 1, "1"), (2, 2, "2"), (3, 4, "3-4"), (5, 9, "5-9"), (10, math.inf, "10+"))


class AuditStage(Stage):
    """Many instances: the counters, risk tables and DU sums live in Redis, where every instance adds its partitions'
    records (the risk tables and DU sums count each chunk once, whoever observes it), so each snapshot is computed
    from the merged state. One instance, the holder of the snapshot lease (``election``), writes the snapshots to the
    audit topic; the others refresh their gauges from the same state and write nothing.

    The attack and identification monitors (``attack``, ``identification``) are the exception: they join each
    sanitized chunk with its swap-log record in memory, which needs both topics' partitions of a document in one
    process, and keep their outcomes there. With either on, the audit is one instance (``single_instance``: the
    service shell enforces it with a lease)."""

    name = "audit"
    version = "3"
    inputs = (topics.CHUNKS_SANITIZED, topics.DEAD_LETTER, topics.SWAP_LOG)

    def __init__(self, counters: Counters, risk_tables: RiskTables | None = None, snapshot_every_s: float = 10.0,
                 clock=time.time, release_version: str | None = None, swapped: Sequence[str] | None = None,
                 population: float = DEFAULT_POPULATION, max_dr: float = 1.0, min_k: int = 1,
                 embedder=None, registry: ModelRegistry | None = None, attack: AttackMonitor | None = None,
                 utility_sample: float = 1.0, identification=None, max_identification: float = 0.09,
                 election: LeaderElection | None = None):
        """``embedder`` (``encode(texts) -> unit rows``, the pipeline's) and ``registry`` (mixture versions)
        switch DU on, over the share ``utility_sample`` of the changed chunks; ``attack`` the attacker's
        accuracy; ``identification`` (``audit_identification.IdentificationMonitor``) the two-stage identification
        probability (paper 003 eq. 7-9), with an alert when a target's exceeds ``max_identification``;
        ``election`` (stores/lease.py): the snapshot lease among many instances (None: this instance writes)."""
        if not 0.0 < utility_sample <= 1.0:
            raise ValueError(f"utility_sample must be in (0, 1], got {utility_sample}")
        self.utility_sample = utility_sample
        self.counters = counters
        self.risk_tables = risk_tables if risk_tables is not None else InMemoryRiskTables()
        self.snapshot_every_s = snapshot_every_s
        self.clock = clock
        self.release_version = release_version
        self.swapped = tuple(swapped) if swapped is not None else None
        self.population = population
        self.max_dr = max_dr
        self.min_k = min_k
        self.embedder = embedder
        self.registry = registry
        self.attack = attack
        self.identification = identification
        self.max_identification = max_identification
        # the in-memory joins of the attack and identification monitors need all partitions in this process
        self.single_instance = attack is not None or identification is not None
        if self.single_instance and election is not None:
            raise ValueError("an audit with the attack or identification monitor is one instance: no snapshot lease")
        self.election = election
        self._mixtures: dict[int, Any] = {}
        self._last_snapshot = 0.0
        self._last_risk: dict[str, dict[str, Any]] = {}
        self._last_attack: dict[str, Any] | None = None
        self._last_identification: dict[str, Any] | None = None
        self.last_report: dict[str, Any] | None = None  # the last snapshot, for the gauges and the dashboard
        self.model_version: int | None = None  # newest mixture version seen on a released chunk

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
                                        swapped=record.get("action") in _SWAPPED_ACTIONS,
                                        at=float(record["released_at"]))

    def _mixture(self, version: int):
        """The mixture version from the registry (cached; None when the registry no longer keeps it)."""
        if version not in self._mixtures:
            from ..mixture.model import SphericalMixture

            stored = self.registry.load(version)
            self._mixtures[version] = None if stored is None else SphericalMixture.from_bytes(stored.model_bytes)
        return self._mixtures[version]

    def _utility(self, changed: list[dict[str, Any]]) -> dict[str, list[UtilityObservation]]:
        """Per release version, the changed chunks' log f(x | l, phi) before and log f(x~ | l, phi) after."""
        scored = [(r, m) for r in changed
                  if "cluster" in r and (m := self._mixture(r["cluster"]["model_version"])) is not None]
        if len(scored) < len(changed):
            self.counters.incr({"utility.unscored": len(changed) - len(scored)})
        if not scored:
            return {}
        X = self.embedder.encode([r["text"] for r, _ in scored])
        out: dict[str, list[UtilityObservation]] = {}
        for row, (record, mixture) in zip(X, scored):
            cluster = record["cluster"]
            after = float(mixture.log_component_densities(row[None, :])[0, cluster["component"]])
            key = f"{record['doc_id']}|{record['chunk_index']}"
            out.setdefault(record["release"]["version"], []).append(UtilityObservation(
                key, cluster["model_version"], log_component_density_before(cluster, mixture.pi), after))
        return out

    def process(self, items: Sequence[tuple[Any, dict[str, Any]]]) -> list[list[Emit] | Exception]:
        deltas: dict[str, int] = {}
        observed: dict[str, list[RiskObservation]] = {}
        changed: list[dict[str, Any]] = []

        def bump(name: str, by: int = 1) -> None:
            deltas[name] = deltas.get(name, 0) + by

        for topic, record in items:
            if topic is topics.DEAD_LETTER:
                bump(f"dead_letters.{record['stage']}")
                continue
            if topic is topics.SWAP_LOG:
                bump(f"actions.{record['action']}")
                got = self._observation(record)
                if got is not None:
                    observed.setdefault(got[0], []).append(got[1])
                if self.attack is not None:
                    self.attack.logged(record)
                continue
            bump("chunks")
            version = (record.get("cluster") or {}).get("model_version")
            if isinstance(version, int) and (self.model_version is None or version > self.model_version):
                self.model_version = version
            if record["chunk_index"] == record["chunk_count"] - 1:
                bump("documents")
            for entity in record["entities"]:
                bump(f"entities.{entity['type']}")
                if entity.get("decision"):  # "common(k=20)" counted as its reason, "common"
                    bump(f"decisions.{entity['decision'].partition('(')[0]}")
                if entity.get("surrogate") is not None:
                    bump(f"replaced.{entity['type']}")
            for change in record["changes"]:
                bump(f"operators.{change['operator']}")
            if record["changes"] and record.get("release") and self.embedder is not None and self.registry is not None \
                    and in_sample(sample_key(record["doc_id"], record["chunk_index"]), self.utility_sample):
                changed.append(record)
            if self.attack is not None:
                self.attack.released(record)
            if self.identification is not None:
                self.identification.released(record)
        for version, observations in observed.items():
            self.risk_tables.observe(version, observations)
        for version, observations in self._utility(changed).items():
            self.risk_tables.observe_utility(version, observations)
        self.counters.incr(deltas)
        return [[] for _ in items]

    def _risk(self) -> dict[str, dict[str, Any]]:
        risk: dict[str, dict[str, Any]] = {}
        for version in self.risk_tables.versions():
            entry: dict[str, Any] = {}
            try:
                entry["all_time"] = risk_of(self.risk_tables.table(version), self.population)
                window = self.risk_tables.window(version)
                entry["window"] = {**risk_of(window.table, self.population), "seconds": self.risk_tables.window_s,
                                   "start": window.start, "end": window.end}
                entry["utility"] = utility_of(self.risk_tables.utility(version))
            except StoreUnavailable:
                raise
            except Exception as exc:  # noqa: BLE001 - a failed fit must not take the snapshot down
                log.warning("audit: risk of a release version failed (%s)", type(exc).__name__)
                entry["error"] = type(exc).__name__
            risk[version] = entry
        return risk

    def _alerts(self, risk: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
        alerts = []
        for version, entry in risk.items():
            for scope in ("all_time", "window"):
                r = entry.get(scope)
                if r is None:
                    continue
                dr, k = r.get("dr"), r.get("k")
                if dr is not None and dr > self.max_dr:
                    alerts.append({"kind": "dr", "scope": scope, "release_version": version, "value": dr,
                                   "threshold": self.max_dr})
                    log.warning("audit alert (%s): DR %.6f > %.6f (n=%d, s1=%d)", scope, dr, self.max_dr, r["n"],
                                r["sample_uniques_before"])
                if k is not None and k < self.min_k:
                    alerts.append({"kind": "k", "scope": scope, "release_version": version, "value": k,
                                   "threshold": self.min_k})
                    log.warning("audit alert (%s): k %d < %d (n=%d)", scope, k, self.min_k, r["n_released"])
        worst = (self._last_identification or {}).get("max")
        if worst is not None and worst > self.max_identification:
            alerts.append({"kind": "identification", "scope": "all_time", "value": worst,
                           "threshold": self.max_identification})
            log.warning("audit alert: two-stage identification probability %.4f > %.4f (%d targets)", worst,
                        self.max_identification, self._last_identification["targets"])
        return alerts

    def report(self) -> dict[str, Any]:
        """The current snapshot (schemas/audit-metrics.v1.json)."""
        counts = self.counters.snapshot()

        def group(prefix: str) -> dict[str, int]:
            return {k[len(prefix):]: v for k, v in sorted(counts.items()) if k.startswith(prefix)}

        risk = self._risk()
        self._last_risk = risk
        self._last_attack = self.attack.result() if self.attack is not None else None
        self._last_identification = self.identification.result() if self.identification is not None else None
        self.last_report = {
            "emitted_at": self.clock(),
            "chunks": counts.get("chunks", 0),
            "documents": counts.get("documents", 0),
            "entities_by_type": group("entities."),
            "replaced_by_type": group("replaced."),
            "decisions": group("decisions."),
            "dead_letters_by_stage": group("dead_letters."),
            "operators": group("operators."),
            "actions": group("actions."),
            "model_version": self.model_version,
            "utility_unscored": counts.get("utility.unscored", 0),
            "risk": risk,
            "attack": self._last_attack,
            "identification": self._last_identification,
            "alerts": self._alerts(risk),
        }
        return self.last_report

    def metrics(self) -> dict[str, Any]:
        """Gauges of the last snapshot: the counts (``chunks``, ``documents``; by key: ``dead_letters`` per
        stage, ``operators``, ``actions`` per chunk, ``entities`` per type), the newest mixture version on a
        released chunk (``model_version``); risk per release version (label ``key``), all time (``risk_*``) and
        over the window (``risk_window_*``); released classes by size (``risk_k_classes``, key
        ``{version}|{sizes}``); mentions whose masking decision has a recorded reason, by reason (``decisions``:
        ``common``, values released as written because enough identities mention them); DU (``risk_du``); the attacker's accuracy (``attack_*``)."""
        out: dict[str, Any] = {}
        if self.last_report is not None:
            r = self.last_report
            out.update(chunks=r["chunks"], documents=r["documents"], dead_letters=r["dead_letters_by_stage"],
                       operators=r["operators"], actions=r["actions"], entities=r["entities_by_type"],
                       decisions=r["decisions"])
            if r["model_version"] is not None:
                out["model_version"] = r["model_version"]
        for scope, prefix in (("all_time", "risk_"), ("window", "risk_window_")):
            for name, field_ in (("dr", "dr"), ("s1_over_n", "s1_over_n"), ("theta", "theta"), ("alpha", "alpha"),
                                 ("min_k", "k"), ("l", "l"), ("n", "n"), ("sample_uniques", "sample_uniques_before"),
                                 ("swapped_uniques", "swapped_uniques"), ("p_hat", "p_hat"),
                                 ("uniques_kept_share", "uniques_kept_share")):
                values = {v: e[scope][field_] for v, e in self._last_risk.items()
                          if e.get(scope, {}).get(field_) is not None}
                if values:
                    out[prefix + name] = values
        k_classes: dict[str, int] = {}
        for version, entry in self._last_risk.items():
            distribution = entry.get("all_time", {}).get("k_distribution", {})
            for low, high, label in K_BINS:
                k_classes[f"{version}|{label}"] = sum(c for size, c in distribution.items() if low <= int(size) <= high)
        if k_classes:
            out["risk_k_classes"] = k_classes
        for name, field_ in (("risk_du", "du"), ("risk_du_changed_chunks", "changed_chunks")):
            values = {v: e["utility"][field_] for v, e in self._last_risk.items()
                      if e.get("utility", {}).get(field_) is not None}
            if values:
                out[name] = values
        if self._last_attack is not None:
            for field_ in ("chunks", "accuracy_before", "accuracy_after", "relative_drop", "mcnemar_p"):
                if self._last_attack.get(field_) is not None:
                    out[f"attack_{field_}"] = self._last_attack[field_]
        if self.election is not None:
            out["snapshot_writer"] = int(self.election.is_leader)
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
        if not self.writes_snapshots():  # another instance writes them; this one's gauges are fresh all the same
            return []
        key = f"audit|{int(now)}"
        return [Emit(topics.AUDIT_METRICS, key, "audit", value)]

    def writes_snapshots(self) -> bool:
        return self.election is None or self.election.is_leader

    def start(self) -> None:
        if self.election is not None:
            self.election.start()

    def close(self) -> None:
        if self.election is not None:
            self.election.stop()
