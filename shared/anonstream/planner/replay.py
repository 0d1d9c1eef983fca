"""The planner's shell: run ingest → pii → embed → cluster (→ refit) once, then replay only the swap stage
(with the sink and the audit's risk tables behind it) per candidate release, and measure each candidate.

Reuses the stage cores and the embedded runner's routing (``EmbeddedPipeline``): the prefix stages are
built by ``runtime.wiring.build_stage``; per candidate a fresh ``SwapStage`` (in-memory pools, counts and
replacement memory, a seeded RNG), ``SinkStage`` and ``AuditStage`` consume the clustered chunks the prefix
emitted, batch by batch, as the embedded runner would have fed them. Per candidate:

* **DR** (eq. 2.16): ``stages.audit.risk_of`` on the audit stage's risk tables, fed by the candidate's swap log;
* **DU** (eq. 2.19): ``risk.utility`` over the chunks the release changed (non-empty ``changes``), their
  pre-release embedding and component from the cluster stage, re-embedded after with the pipeline's embedder,
  under the mixture version that assigned them (rows grouped by version, the sums added);
* share of chunks changed; attack accuracy (``attack.harness.run_attack``) when attack corpora are given.

Logs carry counts, names and timings only, never document text.
"""
from __future__ import annotations

import hashlib
import logging
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .. import topics
from ..config import Settings
from ..mixture.model import SphericalMixture
from ..risk.utility import UtilityTerms, utility_terms
from ..runtime.embedded import EmbeddedPipeline, read_lines
from ..runtime.wiring import build_stage, in_memory_stores
from ..stages.audit import AuditStage, risk_of
from ..stages.base import Emit
from ..stages.sink import SinkStage
from ..stages.swap import SwapStage
from ..stores import base
from ..stores.risk import InMemoryRiskTables
from ..swap import InMemoryPoolStore, InMemoryTupleCounts, SwapProcessor
from ..swap.stores import InMemoryReplacementMemory
from .candidates import Candidate

log = logging.getLogger(__name__)

PREFIX_STAGES = ("ingest", "pii", "embed", "cluster", "refit")


@dataclass
class Prefix:
    """What the stages before swap produced, once for every candidate."""

    batches: list[list[Emit]]                               # clustered chunk records, per input batch
    before: dict[tuple[str, int], tuple[np.ndarray, int, int]]  # (doc, index) -> (x, model version, component)
    models: dict[int, SphericalMixture]
    embedder: Any
    settings: Settings
    documents: int = 0
    chunks: int = 0
    dead_letters: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


@dataclass
class CandidateResult:
    candidate: Candidate
    risk: dict[str, Any]
    utility: UtilityTerms | None
    chunks: int
    changed: int
    actions: dict[str, int]
    documents_out: int
    dead_letters: int
    sanitized: list[dict[str, Any]]
    attack: dict[str, Any] | None
    seconds: float
    embed_seconds: float

    @property
    def dr(self) -> float | None:
        return self.risk.get("dr")

    @property
    def du(self) -> float | None:
        return None if self.utility is None else self.utility.du

    @property
    def share_changed(self) -> float | None:
        return self.changed / self.chunks if self.chunks else None


def progress_bar(total: int, desc: str, enabled: bool = True):
    """tqdm on stderr (a dependency of the project)."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="candidate" if desc.startswith("replay") else "doc",
                disable=not enabled, file=sys.stderr)


def run_prefix(input_path: Path, settings: Settings | None = None, batch_documents: int = 16,
               progress: bool = True) -> Prefix:
    """Documents through ingest → pii → embed → cluster (→ refit) with the embedded runner's routing. Every chunk
    is embedded (``embed_others`` 1): a candidate release may change chunks the configured one leaves alone."""
    settings = replace(settings or Settings(), embed_others=1.0)
    stores = in_memory_stores(settings)
    stores.registry = base.InMemoryModelRegistry(keep=1 << 30)  # every version stays loadable for DU
    stages = [build_stage(name, settings, stores) for name in PREFIX_STAGES]
    pipeline = EmbeddedPipeline(stages, settings.topic_prefix)
    started = time.perf_counter()
    batches: list[list[Emit]] = []
    dead: Counter[str] = Counter()
    documents = 0

    def keep(emits: list[Emit]) -> None:
        clustered = [e for e in emits if e.topic is topics.CHUNKS_CLUSTERED]
        dead.update(e.value["stage"] for e in emits if e.topic is topics.DEAD_LETTER)
        if clustered:
            batches.append(clustered)

    total = sum(1 for line in input_path.open("rb") if line.strip())
    bar = progress_bar(total, "prefix (ingest..cluster)", progress)
    with input_path.open("rb") as source:
        batch: list[tuple[str, bytes]] = []
        for record in read_lines(source):
            batch.append(record)
            if len(batch) == batch_documents:
                keep(pipeline.run_batch(batch) + pipeline.tick(time.time()))
                documents += len(batch)
                bar.update(len(batch))
                batch = []
        if batch:
            keep(pipeline.run_batch(batch))
            documents += len(batch)
            bar.update(len(batch))
        keep(pipeline.finish())
    bar.close()
    before: dict[tuple[str, int], tuple[np.ndarray, int, int]] = {}
    versions: set[int] = set()
    for emit in (e for b in batches for e in b):
        v = emit.value
        cluster = v["cluster"]
        before[(v["doc_id"], int(v["chunk_index"]))] = (
            np.asarray(v["embedding"]["vector"], dtype=np.float32), int(cluster["model_version"]),
            int(cluster["component"]))
        versions.add(int(cluster["model_version"]))
    models = {}
    for version in sorted(versions):
        stored = stores.registry.load(version)
        if stored is None:
            raise RuntimeError(f"mixture version {version} is no longer in the registry")
        models[version] = SphericalMixture.from_bytes(stored.model_bytes)
    embedder = next(s for s in stages if s.name == "embed").embedder
    return Prefix(batches, before, models, embedder, settings, documents, len(before), dict(dead),
                  time.perf_counter() - started)


class EmbeddingCache:
    """Re-embeddings of changed chunk texts, shared by the candidates (same text, same vector); keyed by
    a hash of the text so the cache holds no text."""

    def __init__(self, encode: Callable[[list[str]], np.ndarray]):
        self.encode = encode
        self._vectors: dict[bytes, np.ndarray] = {}
        self.hits = 0
        self.encoded = 0

    def __call__(self, texts: list[str]) -> np.ndarray:
        keys = [hashlib.blake2b(t.encode("utf-8"), digest_size=16).digest() for t in texts]
        missing: dict[bytes, str] = {}
        for k, t in zip(keys, texts):
            if k not in self._vectors and k not in missing:
                missing[k] = t
        self.hits += len(texts) - len(missing)
        if missing:
            vectors = self.encode(list(missing.values()))
            self.encoded += len(missing)
            self._vectors.update(zip(missing.keys(), vectors))
        if not texts:
            return np.empty((0, 0), dtype=np.float32)
        return np.stack([self._vectors[k] for k in keys])


def measure_utility(prefix: Prefix, changed: list[dict[str, Any]], embed: EmbeddingCache) -> UtilityTerms | None:
    """DU's sums over the changed chunks, per mixture version that assigned them, added up."""
    if not changed:
        return None
    after = embed([c["text"] for c in changed])
    groups: dict[int, list[int]] = {}
    for i, c in enumerate(changed):
        groups.setdefault(prefix.before[(c["doc_id"], int(c["chunk_index"]))][1], []).append(i)
    total: UtilityTerms | None = None
    for version, rows in sorted(groups.items()):
        keys = [(changed[i]["doc_id"], int(changed[i]["chunk_index"])) for i in rows]
        X = np.stack([prefix.before[k][0] for k in keys])
        labels = np.asarray([prefix.before[k][2] for k in keys], dtype=np.int64)
        terms = utility_terms(prefix.models[version], X, after[rows], labels)
        total = terms if total is None else total + terms
    return total


def replay(prefix: Prefix, candidate: Candidate, embed: EmbeddingCache, seed: int = 0,
           attack: Callable[[list[dict[str, Any]]], dict[str, Any]] | None = None) -> CandidateResult:
    """The candidate's swap stage (and sink, audit tables) on the prefix's clustered chunks."""
    started = time.perf_counter()
    release = candidate.release
    swap = SwapStage(SwapProcessor(release, InMemoryPoolStore(), InMemoryTupleCounts(), rng=random.Random(seed),
                                   memory=InMemoryReplacementMemory()))
    sink = SinkStage(base.InMemoryPendingChunks(), prefix.settings.reassembly_wait_s)
    tables = InMemoryRiskTables()
    audit = AuditStage(base.InMemoryCounters(), tables, release_version=release.version, swapped=release.swapped,
                       population=release.superpopulation_size)
    pipeline = EmbeddedPipeline([swap, sink, audit], prefix.settings.topic_prefix)
    chunks: list[dict[str, Any]] = []
    documents: list[dict[str, Any]] = []
    actions: Counter[str] = Counter()
    dead = 0

    def keep(emits: list[Emit]) -> None:
        nonlocal dead
        for e in emits:
            if e.topic is topics.CHUNKS_SANITIZED:
                chunks.append(e.value)
            elif e.topic is topics.SANITIZED:
                documents.append(e.value)
            elif e.topic is topics.SWAP_LOG:
                actions[e.value.get("action", "unknown")] += 1
            elif e.topic is topics.DEAD_LETTER:
                dead += 1

    for batch in prefix.batches:
        keep(pipeline.run_records(batch) + pipeline.tick(time.time()))
    keep(pipeline.finish())
    risk = risk_of(tables.table(release.version), release.superpopulation_size)
    changed = [c for c in chunks if c.get("changes")]
    t0 = time.perf_counter()
    terms = measure_utility(prefix, changed, embed)
    embed_seconds = time.perf_counter() - t0
    attack_result = attack(documents) if attack is not None else None
    return CandidateResult(candidate, risk, terms, len(chunks), len(changed), dict(actions), len(documents), dead,
                           documents, attack_result, time.perf_counter() - started, embed_seconds)
