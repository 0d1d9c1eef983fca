"""Configuration from the environment (12-factor). Secrets are read from the environment only.

| variable | default | meaning |
| --- | --- | --- |
| ANONSTREAM_BOOTSTRAP | 127.0.0.1:19092 | Kafka bootstrap servers |
| ANONSTREAM_REDIS_URL | redis://127.0.0.1:16379/0 | Redis (model registry, pseudonyms, pools, reassembly) |
| ANONSTREAM_REDIS_CLUSTER | 0 | 1: Redis Cluster (redis-py's RedisCluster); ANONSTREAM_REDIS_URL names any one node, the others are discovered |
| ANONSTREAM_TOPIC_PREFIX | anonstream | prefix of every topic name |
| ANONSTREAM_TENANT | default | namespace of pseudonyms and state keys in Redis |
| ANONSTREAM_PARTITIONS | 4 | partitions of the topics `anonstream topics create` makes |
| ANONSTREAM_CHUNK_MAX_CHARS | 1200 | a chunk closes before it would exceed this many characters |
| ANONSTREAM_CHUNK_MAX_SENTENCES | 8 | ... or this many sentences |
| ANONSTREAM_SPACY_MODEL | (resolved) | spaCy pipeline name or path for the pii stage |
| ANONSTREAM_PII_CONFIG | (built-in defaults) | PII config (YAML/JSON: recognizers, policy options) of the pii stage |
| ANONSTREAM_EMBED_MODEL | all-MiniLM-L6-v2 | sentence-transformers model name or path |
| ANONSTREAM_EMBED_BACKEND | static | static (a token table distilled once from the model, embedding/static.py: its own embedding space, recorded on every vector and mixture; benchmarks/results/embed_backends.md), onnx (ONNX Runtime, int8), onnx-fp32 or torch (embedding/; an ONNX backend that cannot run falls back to torch) |
| ANONSTREAM_ONNX_CACHE | $XDG_CACHE_HOME/anonstream/onnx | where the ONNX export of the embedding model is written on first use (embedding/onnx.py) |
| ANONSTREAM_STATIC_CACHE | $XDG_CACHE_HOME/anonstream/static | where the static backend's table is distilled on first use (embedding/static.py) |
| ANONSTREAM_EMBED_BATCH | 16 | model batch size (texts per forward pass) |
| ANONSTREAM_PII_MAX_BATCH | 16 | most records per batch of the pii service (the others take 100): embed starts on a long document's first chunks while pii works on the rest (benchmarks/results/latency.md) |
| ANONSTREAM_BLAS_THREADS | 1 | numpy's BLAS threads in `anonstream run` and the services (0: OpenBLAS's default, one per core; its idle threads spin, and on 2 shared cores the pii stage then took 3.7x the CPU) |
| ANONSTREAM_EMBED_THREADS | 0 | ONNX Runtime intra-op threads of the embed stage (0: one per physical core) |
| ANONSTREAM_EMBED_OTHERS | 0.1 | share of the chunks with nothing to swap that the embed stage embeds anyway, a hash sample for the refit reservoir (stages/embed.py `needs_vector`; 1: every chunk) |
| ANONSTREAM_EMBED_WINDOW | 128 | records per embed call; the encoder sorts a window by length before cutting model batches, which saves padding |
| ANONSTREAM_MAX_WAIT_MS | 10 | longest wait to fill a batch in the other services (batches of 100, pii of ANONSTREAM_PII_MAX_BATCH); under load the batch fills without waiting, at a low rate every wait is latency (benchmarks/results/latency.md) |
| ANONSTREAM_EMBED_MAX_WAIT_MS | 20 | longest wait to fill an embedding window (a window rarely fills at a low rate: every wait is latency) |
| ANONSTREAM_RUN_OVERLAP | 1 | `anonstream run` embeds each batch on a worker thread while the other stages work on the batches beside it (runtime/embedded.py); 0: one stage at a time. The overlap is faster by wall time, slower per CPU-second (benchmarks/results/profile.md) |
| ANONSTREAM_MIXTURE_FAMILY | pkb | pkb or scauchy |
| ANONSTREAM_MIXTURE_K | 8 | components of the mixture |
| ANONSTREAM_MIXTURE_MIN_WEIGHT | 0.001 | lower bound ε on mixture weights |
| ANONSTREAM_REFIT_INTERVAL_S | 60 | refit period |
| ANONSTREAM_REFIT_MIN_SAMPLES | 32 | smallest reservoir that is refitted |
| ANONSTREAM_REFIT_DRIFT_NATS | 25 | refit early when recent chunks' mean log-density falls this far below the model's training mean |
| ANONSTREAM_AUDIT_LEASE_TTL_S | 15 | the audit's lease: its holder writes the snapshots; with the attack or identification monitor on, only its holder consumes and a second instance waits (runtime/service.py) |
| ANONSTREAM_REFIT_LEASE_TTL_S | 30 | the refit leader's lease: renewed every third of it; a standby takes over at most this long (plus a third) after the leader dies (stores/lease.py) |
| ANONSTREAM_RESERVOIR_SIZE | 20000 | embeddings kept for refits |
| ANONSTREAM_RELEASE | (built-in default = deploy/release.default.yaml) | release configuration YAML of the swap stage |
| ANONSTREAM_VALUE_COUNTS | (none) | `anonstream run` only: identities per value of a reference corpus (`anonstream counts warm --out`), the run's counts start from them |
| ANONSTREAM_VALUE_COUNTS_TTL_S | 2592000 | services: a value's identity count in Redis expires this long after its last mention (30 days) |
| ANONSTREAM_REASSEMBLY_WAIT_S | 900 | longest wait for a document's missing chunks; then the sink dead-letters what it has |
| ANONSTREAM_REASSEMBLY_TTL_S | 86400 | how long per-document state (sink, pii) is kept in Redis |
| ANONSTREAM_INSTANCE | 0 | replica number of this process (part of the transactional id) |
| ANONSTREAM_PROCESSING_GUARANTEE | at-least-once | exactly-once: every stage commits its outputs with its input offsets in Kafka transactions (one per input partition, runtime/transactions.py), a crash leaves no duplicate for a read_committed consumer; at-least-once: only the stages of ANONSTREAM_TRANSACTIONAL_STAGES do (docs/configuration.md: what it costs) |
| ANONSTREAM_TRANSACTIONAL_STAGES | sink | with at-least-once: the stages whose produce and offset commit are Kafka transactions all the same |
| ANONSTREAM_PSEUDONYM_KEY | (required by the pii service) | HMAC key of pseudonyms (secret; never a field here) |
| ANONSTREAM_PSEUDONYM_TTL_S | 31536000 | how long an entity keeps its pseudonym in Redis |
| ANONSTREAM_REPLICATION | 1 | replication factor of the topics `anonstream topics create` makes |
| ANONSTREAM_LOG_LEVEL | INFO | log level |
| ANONSTREAM_AUDIT_MAX_DR | 1.0 | the audit snapshot alerts when a release's DR (paper 000 eq. 2.16) exceeds this (1.0: never) |
| ANONSTREAM_AUDIT_MIN_K | 1 | ... or when the released tuples' k-anonymity falls below this (1: never) |
| ANONSTREAM_AUDIT_SNAPSHOT_S | 10 | the audit writes a snapshot to the audit topic (and refreshes its gauges) this often |
| ANONSTREAM_AUDIT_WINDOW_SECONDS | 3600 | the audit's sliding-window risk tables cover this much event time (stores/risk.py) |
| ANONSTREAM_AUDIT_WINDOW_BUCKET_SECONDS | 60 | ... in buckets of this many seconds |
| ANONSTREAM_AUDIT_UTILITY | 0.1 | share of the changed chunks the audit re-embeds for DU (paper 000 eq. 2.19; a hash sample, stages/audit.py); 0: off |
| ANONSTREAM_AUDIT_ATTACK_TRAIN | (none) | reference corpus (JSONL) of the audit's attacker; unset: no attack accuracy |
| ANONSTREAM_AUDIT_ATTACK_LABEL | ticker | metadata field the attacker predicts |
| ANONSTREAM_AUDIT_ATTACK_KIND | capitalized | attacker of attack/harness.py (full or capitalized) |
| ANONSTREAM_AUDIT_ID_TARGETS | (none) | intruder corpus (JSONL: writing sample + known fields per released `doc_id`) of the two-stage identification probability (paper 003 eq. 7-9, stages/audit_identification.py); unset: off |
| ANONSTREAM_AUDIT_ID_FIELDS | (none) | comma-separated metadata fields the intruder knows (stage 1) |
| ANONSTREAM_SYNTH_FIELDS | (none) | comma-separated metadata fields the sink replaces by a draw of the synthesizer the refit stage fits and versions in Redis (paper 003, synthesis/stream.py); unset: off |
| ANONSTREAM_SYNTH_LAMBDA_RATIO | 0.1 | its knob R = λ/λ_max (R >= 1: the marginal; pick it with `anonstream synth-calibrate`) |
| ANONSTREAM_SYNTH_REFIT_S | 3600 | refit interval (the last 5000 complete documents the refit stage saw) |
| ANONSTREAM_SYNTH_MIN_DOCS | 50 | no fit before this many complete documents with every field |
| ANONSTREAM_SYNTH_SURFACE_FORMS | (none) | JSON `{field: {level: [words]}}` of the consistency rule (synthesis/consistency.py) |
| ANONSTREAM_AUDIT_MAX_ID | 0.09 | the audit snapshot alerts when a target's identification probability exceeds this (the EMA figure cited by paper 003) |
| ANONSTREAM_DASHBOARD_FRONTIER | (none) | a `frontier.png` of `anonstream plan-release`, shown on the audit service's dashboard (`GET /`) |
| ANONSTREAM_DASHBOARD_SCRAPE | (none) | comma-separated `host:port` of the other services' metrics ports; the audit service's dashboard reads their `/metrics` for its per-stage charts (its own numbers it reads without this) |
| ANONSTREAM_DASHBOARD_SCRAPE_S | 5 | ... this often; the dashboard keeps the last hour in memory |
| ANONSTREAM_API_TOKEN | (required by `anonstream serve`) | bearer token of the REST API (secret; never a field here); unset: the server refuses to start unless `--insecure-no-auth` |
| ANONSTREAM_API_HOST | 127.0.0.1 | address `anonstream serve` listens on |
| ANONSTREAM_API_PORT | 8080 | ... and port |
| ANONSTREAM_API_MAX_BODY_BYTES | 1048576 | larger request bodies get 413 |
| ANONSTREAM_API_RESULT_TTL_S | 86400 | how long the API keeps a sanitized document for `GET /v1/documents/{id}` (Redis) |
| ANONSTREAM_KAFKA_SECURITY_PROTOCOL | PLAINTEXT | PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL (runtime/kafka.py) |
| ANONSTREAM_KAFKA_SASL_MECHANISM | SCRAM-SHA-512 | SCRAM-SHA-512, SCRAM-SHA-256 or PLAIN (SASL_* protocols) |
| ANONSTREAM_KAFKA_SASL_USERNAME | (none) | SASL user (required by the SASL_* protocols) |
| ANONSTREAM_KAFKA_SASL_PASSWORD | (none) | ... and its password (secret; never a field here) |
| ANONSTREAM_KAFKA_SSL_CAFILE | (system CAs) | PEM file of the CA that signed the brokers' certificates (SSL, SASL_SSL) |
| ANONSTREAM_REDIS_USERNAME | (none) | Redis ACL user (AUTH username password) |
| ANONSTREAM_REDIS_PASSWORD | (none) | ... and its password (secret; never a field here, never in ANONSTREAM_REDIS_URL) |
| ANONSTREAM_REDIS_CA_FILE | (system CAs) | PEM file of the CA that signed Redis' certificate (needs a `rediss://` URL: TLS) |
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from urllib.parse import urlsplit, urlunsplit


PROCESSING_GUARANTEES = ("at-least-once", "exactly-once")


def _env(name: str, default: str) -> str:
    return os.environ.get(f"ANONSTREAM_{name}", default)


@dataclass(frozen=True, slots=True)
class Settings:
    bootstrap: str = field(default_factory=lambda: _env("BOOTSTRAP", "127.0.0.1:19092"))
    redis_url: str = field(default_factory=lambda: _env("REDIS_URL", "redis://127.0.0.1:16379/0"))
    redis_cluster: bool = field(default_factory=lambda: _env("REDIS_CLUSTER", "0") == "1")
    topic_prefix: str = field(default_factory=lambda: _env("TOPIC_PREFIX", "anonstream"))
    tenant: str = field(default_factory=lambda: _env("TENANT", "default"))
    partitions: int = field(default_factory=lambda: int(_env("PARTITIONS", "4")))
    chunk_max_chars: int = field(default_factory=lambda: int(_env("CHUNK_MAX_CHARS", "1200")))
    chunk_max_sentences: int = field(default_factory=lambda: int(_env("CHUNK_MAX_SENTENCES", "8")))
    spacy_model: str | None = field(default_factory=lambda: os.environ.get("ANONSTREAM_SPACY_MODEL"))
    pii_config: str | None = field(default_factory=lambda: os.environ.get("ANONSTREAM_PII_CONFIG"))
    embed_model: str = field(default_factory=lambda: _env("EMBED_MODEL", "all-MiniLM-L6-v2"))
    embed_backend: str = field(default_factory=lambda: _env("EMBED_BACKEND", "static"))
    embed_batch: int = field(default_factory=lambda: int(_env("EMBED_BATCH", "16")))
    pii_max_batch: int = field(default_factory=lambda: int(_env("PII_MAX_BATCH", "16")))
    blas_threads: int = field(default_factory=lambda: int(_env("BLAS_THREADS", "1")))
    embed_threads: int = field(default_factory=lambda: int(_env("EMBED_THREADS", "0")))
    embed_others: float = field(default_factory=lambda: float(_env("EMBED_OTHERS", "0.1")))
    embed_window: int = field(default_factory=lambda: int(_env("EMBED_WINDOW", "128")))
    max_wait_ms: int = field(default_factory=lambda: int(_env("MAX_WAIT_MS", "10")))
    embed_max_wait_ms: int = field(default_factory=lambda: int(_env("EMBED_MAX_WAIT_MS", "20")))
    run_overlap: bool = field(default_factory=lambda: _env("RUN_OVERLAP", "1") != "0")
    mixture_family: str = field(default_factory=lambda: _env("MIXTURE_FAMILY", "pkb"))
    mixture_k: int = field(default_factory=lambda: int(_env("MIXTURE_K", "8")))
    mixture_min_weight: float = field(default_factory=lambda: float(_env("MIXTURE_MIN_WEIGHT", "0.001")))
    refit_interval_s: float = field(default_factory=lambda: float(_env("REFIT_INTERVAL_S", "60")))
    refit_min_samples: int = field(default_factory=lambda: int(_env("REFIT_MIN_SAMPLES", "32")))
    refit_drift_nats: float = field(default_factory=lambda: float(_env("REFIT_DRIFT_NATS", "25")))
    refit_lease_ttl_s: float = field(default_factory=lambda: float(_env("REFIT_LEASE_TTL_S", "30")))
    audit_lease_ttl_s: float = field(default_factory=lambda: float(_env("AUDIT_LEASE_TTL_S", "15")))
    reservoir_size: int = field(default_factory=lambda: int(_env("RESERVOIR_SIZE", "20000")))
    release: str | None = field(default_factory=lambda: os.environ.get("ANONSTREAM_RELEASE"))
    # identities per value (commonness.py): a reference corpus's counts the embedded runner starts from, and how
    # long the services' Redis counts live after a value's last mention
    value_counts: str | None = field(default_factory=lambda: os.environ.get("ANONSTREAM_VALUE_COUNTS"))
    value_counts_ttl_s: int = field(default_factory=lambda: int(_env("VALUE_COUNTS_TTL_S", str(30 * 86400))))
    reassembly_wait_s: float = field(default_factory=lambda: float(_env("REASSEMBLY_WAIT_S", "900")))
    transactional_stages: tuple[str, ...] = field(
        default_factory=lambda: tuple(s for s in _env("TRANSACTIONAL_STAGES", "sink").split(",") if s))
    processing_guarantee: str = field(default_factory=lambda: _env("PROCESSING_GUARANTEE", "at-least-once"))
    instance: str = field(default_factory=lambda: _env("INSTANCE", "0"))
    reassembly_ttl_s: int = field(default_factory=lambda: int(_env("REASSEMBLY_TTL_S", "86400")))
    pseudonym_ttl_s: int = field(default_factory=lambda: int(_env("PSEUDONYM_TTL_S", "31536000")))
    replication: int = field(default_factory=lambda: int(_env("REPLICATION", "1")))
    log_level: str = field(default_factory=lambda: _env("LOG_LEVEL", "INFO"))
    # the swap stage's tuple counts cover this sliding window (stores/redis_swap.py)
    swap_counts_window_s: int = field(default_factory=lambda: int(_env("SWAP_COUNTS_WINDOW_S", str(7 * 86400))))
    # Prometheus endpoint of a service (runtime/metrics.py): off when the port is 0
    metrics_port: int = field(default_factory=lambda: int(_env("METRICS_PORT", "0")))
    metrics_host: str = field(default_factory=lambda: _env("METRICS_HOST", "127.0.0.1"))
    # alert thresholds of the audit stage's risk snapshot (stages/audit.py)
    audit_max_dr: float = field(default_factory=lambda: float(_env("AUDIT_MAX_DR", "1.0")))
    audit_min_k: int = field(default_factory=lambda: int(_env("AUDIT_MIN_K", "1")))
    audit_snapshot_s: float = field(default_factory=lambda: float(_env("AUDIT_SNAPSHOT_S", "10")))
    audit_window_s: float = field(default_factory=lambda: float(_env("AUDIT_WINDOW_SECONDS", "3600")))
    audit_bucket_s: float = field(default_factory=lambda: float(_env("AUDIT_WINDOW_BUCKET_SECONDS", "60")))
    audit_utility: float = field(default_factory=lambda: float(_env("AUDIT_UTILITY", "0.1")))
    audit_attack_train: str | None = field(default_factory=lambda: os.environ.get("ANONSTREAM_AUDIT_ATTACK_TRAIN"))
    audit_attack_label: str = field(default_factory=lambda: _env("AUDIT_ATTACK_LABEL", "ticker"))
    audit_attack_kind: str = field(default_factory=lambda: _env("AUDIT_ATTACK_KIND", "capitalized"))
    audit_id_targets: str | None = field(default_factory=lambda: os.environ.get("ANONSTREAM_AUDIT_ID_TARGETS"))
    audit_id_fields: str = field(default_factory=lambda: _env("AUDIT_ID_FIELDS", ""))
    audit_max_id: float = field(default_factory=lambda: float(_env("AUDIT_MAX_ID", "0.09")))
    # the metadata synthesizer in the stream (synthesis/stream.py): refit publishes, sink draws; off when unset
    synth_fields: str = field(default_factory=lambda: _env("SYNTH_FIELDS", ""))
    synth_lambda_ratio: float = field(default_factory=lambda: float(_env("SYNTH_LAMBDA_RATIO", "0.1")))
    synth_refit_s: float = field(default_factory=lambda: float(_env("SYNTH_REFIT_S", "3600")))
    synth_min_docs: int = field(default_factory=lambda: int(_env("SYNTH_MIN_DOCS", "50")))
    synth_surface_forms: str | None = field(default_factory=lambda: os.environ.get("ANONSTREAM_SYNTH_SURFACE_FORMS"))
    # the risk-utility frontier plot the audit service's dashboard shows (runtime/dashboard.py)
    dashboard_frontier: str | None = field(default_factory=lambda: os.environ.get("ANONSTREAM_DASHBOARD_FRONTIER"))
    # the other services' metrics endpoints the dashboard scrapes for its per-stage time series, and how often
    dashboard_scrape: tuple[str, ...] = field(
        default_factory=lambda: tuple(t.strip() for t in _env("DASHBOARD_SCRAPE", "").split(",") if t.strip()))
    dashboard_scrape_s: float = field(default_factory=lambda: float(_env("DASHBOARD_SCRAPE_S", "5")))
    # the REST API (api/); its token is read from ANONSTREAM_API_TOKEN by `anonstream serve`, not kept here
    api_host: str = field(default_factory=lambda: _env("API_HOST", "127.0.0.1"))
    api_port: int = field(default_factory=lambda: int(_env("API_PORT", "8080")))
    api_max_body_bytes: int = field(default_factory=lambda: int(_env("API_MAX_BODY_BYTES", str(1 << 20))))
    api_result_ttl_s: int = field(default_factory=lambda: int(_env("API_RESULT_TTL_S", "86400")))
    # connection security (runtime/kafka.py, stores/redis_state.py); the passwords are read from
    # ANONSTREAM_KAFKA_SASL_PASSWORD and ANONSTREAM_REDIS_PASSWORD when connecting, not kept here
    kafka_security_protocol: str = field(default_factory=lambda: _env("KAFKA_SECURITY_PROTOCOL", "PLAINTEXT"))
    kafka_sasl_mechanism: str = field(default_factory=lambda: _env("KAFKA_SASL_MECHANISM", "SCRAM-SHA-512"))
    kafka_sasl_username: str | None = field(default_factory=lambda: os.environ.get("ANONSTREAM_KAFKA_SASL_USERNAME"))
    kafka_ssl_cafile: str | None = field(default_factory=lambda: os.environ.get("ANONSTREAM_KAFKA_SSL_CAFILE"))
    redis_username: str | None = field(default_factory=lambda: os.environ.get("ANONSTREAM_REDIS_USERNAME"))
    redis_ca_file: str | None = field(default_factory=lambda: os.environ.get("ANONSTREAM_REDIS_CA_FILE"))

    def transactional(self, stage: str) -> bool:
        """Whether the service of ``stage`` commits its outputs and input offsets in Kafka transactions."""
        if self.processing_guarantee not in PROCESSING_GUARANTEES:
            raise ValueError(f"ANONSTREAM_PROCESSING_GUARANTEE={self.processing_guarantee!r}: one of "
                             f"{', '.join(PROCESSING_GUARANTEES)}")
        return self.processing_guarantee == "exactly-once" or stage in self.transactional_stages

    def describe(self) -> dict[str, object]:
        """The settings, safe to log (no secrets are fields of this class; a password written into
        ANONSTREAM_REDIS_URL against the advice above is masked)."""
        described = {f.name: getattr(self, f.name) for f in fields(self)}
        described["redis_url"] = _without_password(self.redis_url)
        return described


def _without_password(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = f"{parts.username}:***" if parts.username else ":***"
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{user}@{host}"))
