"""Builds the stage cores with their stores: in-process stores for the embedded runner, Redis
stores for the services. The stage classes are the same either way."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..commonness import InMemoryValueCounts, ValueCounts
from ..config import Settings
from ..hierarchy.registry import HierarchyRegistry, InMemoryHierarchyRegistry
from ..stages.base import Stage
from ..stores import base
from ..stores.lease import LeaderElection, LeaseBackend
from ..stores.risk import InMemoryRiskTables, RiskTables
from ..swap import InMemoryPoolStore, InMemoryTupleCounts, PoolStore, TupleCounts
from ..swap.stores import InMemoryReplacementMemory, ReplacementMemory

if TYPE_CHECKING:  # the pii engine imports spaCy: only the pii stage and the embedded runner load it
    from ..pii.engine import PseudonymStore


def blas_limit(threads: int):
    """Limit numpy's BLAS (OpenBLAS) to ``threads`` for the rest of the process (0: leave its default, one per
    core) and return threadpoolctl's handle (``restore_original_limits``). Measured on the 2 shared cores: the
    pii stage (spaCy's matmuls) took 3.7x the CPU with OpenBLAS's 2 threads, a 5,000-point EM fit 12x."""
    if threads <= 0:
        return None
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=threads, user_api="blas")


STAGE_NAMES = ("ingest", "pii", "embed", "cluster", "refit", "swap", "sink", "audit")


@dataclass
class Stores:
    pseudonyms: PseudonymStore | None  # the pii stage's (None in the other services)
    document_states: base.DocumentStateStore
    pending: base.PendingChunks
    registry: base.ModelRegistry
    reservoir: base.Reservoir
    counters: base.Counters
    swap_pools: PoolStore
    tuple_counts: TupleCounts
    replacements: ReplacementMemory
    risk_tables: RiskTables
    # versions of the metadata synthesizer (paper 003; refit publishes, sink draws)
    synthesis_registry: base.ModelRegistry = field(default_factory=base.InMemoryModelRegistry)
    # versions of the value hierarchies (paper 004; refit publishes, the hierarchy generalizer reads)
    hierarchy_registry: HierarchyRegistry = field(default_factory=InMemoryHierarchyRegistry)
    # distinct identities per value (commonness.py; the pii stage counts and decides)
    value_counts: ValueCounts = field(default_factory=InMemoryValueCounts)
    # the stage's lease (stores/lease.py): refit's leader lease (in the mixture registry's slot), the audit's
    # single-instance lease; None: no election (the in-process runner, the other services)
    lease: LeaseBackend | None = None


def in_memory_stores(settings: Settings) -> Stores:
    from ..pii.engine import InMemoryPseudonymStore

    return Stores(
        pseudonyms=InMemoryPseudonymStore(),
        document_states=base.InMemoryDocumentState(),
        pending=base.InMemoryPendingChunks(),
        registry=base.InMemoryModelRegistry(),
        reservoir=base.InMemoryReservoir(settings.reservoir_size),
        counters=base.InMemoryCounters(),
        swap_pools=InMemoryPoolStore(),
        tuple_counts=InMemoryTupleCounts(),
        replacements=InMemoryReplacementMemory(),
        risk_tables=InMemoryRiskTables(settings.audit_window_s, settings.audit_bucket_s),
        value_counts=InMemoryValueCounts.load(settings.value_counts) if settings.value_counts
        else InMemoryValueCounts(),
    )


def _synthesis(settings: Settings, stores: Stores, stage: str):
    """The metadata synthesizer's part in the refit or the sink stage; None when ANONSTREAM_SYNTH_FIELDS is unset."""
    fields = [f for f in settings.synth_fields.split(",") if f]
    if not fields:
        return None
    from ..synthesis.stream import MetadataSynthesis, SynthesisRefitter

    if stage == "refit":
        return SynthesisRefitter(stores.synthesis_registry, fields, settings.synth_lambda_ratio,
                                 settings.synth_refit_s, settings.synth_min_docs)
    forms = None
    if settings.synth_surface_forms:
        import json
        from pathlib import Path

        forms = json.loads(Path(settings.synth_surface_forms).read_text(encoding="utf-8"))
    return MetadataSynthesis(stores.synthesis_registry, fields, forms)


def _release(settings: Settings):
    from ..swap import Release

    return Release.from_yaml(settings.release) if settings.release else Release.default()


def _utility_share(settings: Settings) -> float:
    """The share of the changed chunks the audit's DU scores (``ANONSTREAM_AUDIT_UTILITY``: 0 off, > 1 or < 0 all);
    the embed stage embeds that sample too."""
    if not settings.audit_utility:
        return 0.0
    return min(1.0, settings.audit_utility) if settings.audit_utility > 0 else 1.0


def build_stage(name: str, settings: Settings, stores: Stores) -> Stage:
    """One stage core; heavy models (spaCy, the encoder) are loaded only by the stage needing them."""
    if name == "ingest":
        from ..stages.ingest import IngestStage

        return IngestStage(settings.chunk_max_chars, settings.chunk_max_sentences)
    if name == "pii":
        from ..pii.engine import PiiConfig, PiiEngine
        from ..stages.pii import PiiStage

        config = PiiConfig.load(settings.pii_config) if settings.pii_config else PiiConfig()
        if settings.spacy_model:
            config.spacy_model = settings.spacy_model
        engine = PiiEngine.from_config(config)
        release = _release(settings)
        return PiiStage(engine, stores.pseudonyms, stores.document_states, settings.tenant,
                        values=stores.value_counts, common=release.common, identity_field=release.identity_field)
    if name == "embed":
        from ..embedding import Embedder
        from ..stages.embed import EmbedStage

        return EmbedStage(Embedder(settings.embed_model, settings.embed_batch, threads=settings.embed_threads),
                          _release(settings), others_share=settings.embed_others,
                          utility_share=_utility_share(settings))
    if name == "cluster":
        from ..stages.cluster import ClusterStage

        return ClusterStage(stores.registry, settings.mixture_family, settings.mixture_k,
                            settings.mixture_min_weight)
    if name == "refit":
        from ..hierarchy.stream import HierarchyRefitter
        from ..stages.refit import Refitter, RefitStage

        election = None if stores.lease is None else LeaderElection(
            stores.lease, settings.refit_lease_ttl_s, name=f"refit@{settings.instance}")
        return RefitStage(Refitter(stores.reservoir, stores.registry, settings.mixture_family,
                                   settings.mixture_k, settings.mixture_min_weight,
                                   settings.refit_interval_s, settings.refit_min_samples,
                                   settings.refit_drift_nats, election=election),
                          synthesis=_synthesis(settings, stores, "refit"),
                          hierarchies=HierarchyRefitter.from_env(stores.hierarchy_registry, settings.embed_model))
    if name == "swap":
        from ..stages.swap import SwapStage
        from ..swap import SwapProcessor

        release = _release(settings)
        return SwapStage(SwapProcessor(release, stores.swap_pools, stores.tuple_counts,
                                       memory=stores.replacements))
    if name == "sink":
        from ..stages.sink import SinkStage

        return SinkStage(stores.pending, settings.reassembly_wait_s, synthesis=_synthesis(settings, stores, "sink"))
    if name == "audit":
        from ..stages.audit import AuditStage

        release = _release(settings)
        embedder = None
        if settings.audit_utility:
            from ..embedding import Embedder

            embedder = Embedder(settings.embed_model, settings.embed_batch, threads=settings.embed_threads)
        attack = None
        if settings.audit_attack_train:
            from ..stages.audit_attack import AttackMonitor

            attack = AttackMonitor.from_corpus(settings.audit_attack_train, settings.audit_attack_label,
                                               settings.audit_attack_kind)
        identification = None
        if settings.audit_id_targets:
            from ..stages.audit_identification import IdentificationMonitor

            identification = IdentificationMonitor.from_corpus(
                settings.audit_id_targets, [f for f in settings.audit_id_fields.split(",") if f], settings.audit_max_id)
        # many instances share the counts and risk tables in Redis and one writes the snapshots; with the attack or
        # identification monitor (in-memory joins) the audit is one instance, which the service shell enforces
        election = None if stores.lease is None or attack is not None or identification is not None else \
            LeaderElection(stores.lease, settings.audit_lease_ttl_s, name=f"audit@{settings.instance}")
        return AuditStage(stores.counters, stores.risk_tables, snapshot_every_s=settings.audit_snapshot_s,
                          release_version=release.version,
                          swapped=release.swapped, population=release.superpopulation_size,
                          max_dr=settings.audit_max_dr, min_k=settings.audit_min_k,
                          embedder=embedder, registry=stores.registry, attack=attack,
                          utility_sample=_utility_share(settings) if embedder is not None else 1.0,
                          identification=identification, max_identification=settings.audit_max_id,
                          election=election)
    raise ValueError(f"unknown stage {name!r}; known: {', '.join(STAGE_NAMES)}")


def build_stages(settings: Settings, stores: Stores) -> list[Stage]:
    """All stages in pipeline order (the embedded runner's order of work)."""
    return [build_stage(name, settings, stores) for name in STAGE_NAMES]


def redis_stores(settings: Settings, stage_name: str) -> Stores:
    """The services' stores (Redis). Only the pii stage needs the pseudonym key (a secret, from
    the environment); it refuses to start without one."""
    from ..stores import redis_state
    from ..stores.redis_hierarchy import RedisHierarchyRegistry
    from ..stores.redis_lease import RedisLease
    from ..stores.redis_risk import RedisRiskTables
    from ..stores.redis_swap import RedisReplacementMemory, RedisSwapPoolStore, RedisTupleCounts

    client = redis_state.connect_settings(settings)
    pseudonyms: PseudonymStore | None = None
    value_counts: ValueCounts = InMemoryValueCounts()
    if stage_name == "pii":
        from ..pii.keys import KeyRing
        from ..stores.redis_pseudonyms import RedisPseudonymStore
        from ..stores.redis_values import RedisValueCounts

        pseudonyms = RedisPseudonymStore(client, ttl_s=settings.pseudonym_ttl_s, tenant=settings.tenant)
        value_counts = RedisValueCounts(client, settings.tenant, KeyRing.from_env(required=True),
                                        ttl_s=settings.value_counts_ttl_s)
    return Stores(
        pseudonyms=pseudonyms,
        document_states=redis_state.RedisDocumentState(client, settings.tenant, "pii-doc",
                                                       settings.reassembly_ttl_s),
        pending=redis_state.RedisPendingChunks(client, settings.tenant, settings.reassembly_ttl_s),
        registry=redis_state.RedisModelRegistry(client, settings.tenant),
        reservoir=redis_state.RedisReservoir(client, settings.tenant, settings.reservoir_size),
        counters=redis_state.RedisCounters(client, settings.tenant),
        swap_pools=RedisSwapPoolStore(client, settings.tenant),
        tuple_counts=RedisTupleCounts(client, settings.tenant, window_s=settings.swap_counts_window_s),
        replacements=RedisReplacementMemory(client, settings.tenant),
        risk_tables=RedisRiskTables(client, settings.tenant, window_s=settings.audit_window_s,
                                    bucket_s=settings.audit_bucket_s),
        synthesis_registry=redis_state.RedisModelRegistry(client, settings.tenant, area="synthesis"),
        hierarchy_registry=RedisHierarchyRegistry(client, settings.tenant),
        value_counts=value_counts,
        lease=(RedisLease(client, settings.tenant, area="mixture") if stage_name == "refit"
               else RedisLease(client, settings.tenant, area="audit") if stage_name == "audit" else None),
    )
