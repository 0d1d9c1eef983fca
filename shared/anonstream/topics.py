"""Topic names (one place), each with the schema its records satisfy and the stage that writes it.

    documents ─ingest→ chunks ─pii→ chunks-pii ─embed→ chunks-embedded ─cluster→ chunks-clustered
      ─swap→ chunks-sanitized ─sink→ sanitized          (refit reads chunks-embedded; audit reads
    every stage's failures → dead-letter                  chunks-sanitized, dead-letter, swap-log)
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Topic:
    suffix: str
    schema: str
    restricted: bool = False  # holds values that must not reach consumers of sanitized data


DOCUMENTS = Topic("documents.v1", "document.v1.json")
CHUNKS = Topic("chunks.v1", "chunk.v1.json")
CHUNKS_PII = Topic("chunks-pii.v1", "chunk-pii.v1.json", restricted=True)
CHUNKS_EMBEDDED = Topic("chunks-embedded.v1", "chunk-embedded.v1.json", restricted=True)
CHUNKS_CLUSTERED = Topic("chunks-clustered.v1", "chunk-clustered.v1.json", restricted=True)
CHUNKS_SANITIZED = Topic("chunks-sanitized.v1", "chunk-sanitized.v1.json")
SANITIZED = Topic("sanitized.v1", "sanitized-document.v1.json")
DEAD_LETTER = Topic("dead-letter.v1", "dead-letter.v1.json", restricted=True)
SWAP_LOG = Topic("swap-log.v1", "swap-log.v1.json", restricted=True)
MODEL_UPDATES = Topic("model-updates.v1", "model-update.v1.json")
AUDIT_METRICS = Topic("audit-metrics.v1", "audit-metrics.v1.json")

ALL = (DOCUMENTS, CHUNKS, CHUNKS_PII, CHUNKS_EMBEDDED, CHUNKS_CLUSTERED, CHUNKS_SANITIZED, SANITIZED,
       DEAD_LETTER, SWAP_LOG, MODEL_UPDATES, AUDIT_METRICS)


def name(topic: Topic, prefix: str) -> str:
    """Full topic name, e.g. ``anonstream.chunks.v1`` for prefix ``anonstream``."""
    return f"{prefix}.{topic.suffix}"
