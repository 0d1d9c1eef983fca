"""sink: reassemble sanitized chunks into sanitized documents, in chunk order, once complete.

Chunks wait in a ``PendingChunks`` store (Redis in the service, so a restart loses nothing). A
document is emitted when all its chunks are there; it is forgotten only after the broker has
acknowledged it (``after_produced``), so a crash in between re-emits it (same key: consumers can
deduplicate) rather than losing it. A chunk of a document already emitted is ignored.
"""
from __future__ import annotations

import hashlib
from typing import Any, Sequence

from .. import topics
from ..records import Chunk
from ..stores.base import PendingChunks
from .base import Emit, Stage


def fingerprint(lineage: dict[str, str]) -> str:
    """Identifies one processing of a document: the stage versions it went through."""
    text = ",".join(f"{k}@{v}" for k, v in sorted(lineage.items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class SinkStage(Stage):
    name = "sink"
    version = "1"
    inputs = (topics.CHUNKS_SANITIZED,)

    def __init__(self, pending: PendingChunks):
        self.pending = pending

    def decode(self, topic, obj: dict[str, Any]) -> Chunk:
        return Chunk.from_wire(obj)

    def process(self, items: Sequence[tuple[Any, Chunk]]) -> list[list[Emit] | Exception]:
        out: list[list[Emit] | Exception] = []
        for _, chunk in items:
            fp = fingerprint(chunk.lineage)
            if self.pending.was_emitted(chunk.doc_id, fp):
                out.append([])
                continue
            stored = self.pending.add(chunk.doc_id, chunk.chunk_index, chunk.chunk_count, chunk.to_wire())
            out.append([self._document(chunk.doc_id, fp)] if stored == chunk.chunk_count else [])
        return out

    def _document(self, doc_id: str, fp: str) -> Emit:
        chunks = self.pending.take(doc_id)
        counts: dict[str, int] = {}
        for chunk in chunks:
            for entity in chunk.get("entities", []):
                counts[entity["type"]] = counts.get(entity["type"], 0) + 1
        lineage = {**chunks[-1]["lineage"], self.name: self.version}
        value = {
            "doc_id": doc_id,
            "text": "".join(c["text"] for c in chunks),
            "metadata": chunks[0]["metadata"],
            "chunk_count": len(chunks),
            "lineage": lineage,
            "entity_counts": counts,
        }
        if chunks[0].get("release") is not None:
            value["release"] = chunks[0]["release"]
        return Emit(topics.SANITIZED, f"{doc_id}|{fp}", doc_id, value)

    def after_produced(self, emits: Sequence[Emit]) -> None:
        for emit in emits:
            if emit.topic is topics.SANITIZED:
                self.pending.mark_emitted(emit.value["doc_id"], emit.key.rsplit("|", 1)[1])
