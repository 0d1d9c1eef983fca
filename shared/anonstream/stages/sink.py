"""sink: reassemble sanitized chunks into sanitized documents, in chunk order, once complete.

The document carries ``changes``: every changed span of its text at document offsets, from the chunks'
pseudonyms and swap changes (``document_changes``; version 2 of the stage).

Chunks wait in a ``PendingChunks`` store (Redis in the service, so a restart loses nothing). A
document is emitted when all its chunks are there; it is forgotten only after the broker has
acknowledged it (``after_produced``), so a crash in between re-emits it (same key: consumers can
deduplicate) rather than losing it. A chunk of a document already emitted is ignored.

The wait is bounded: a document still incomplete ``max_wait_s`` after its first chunk arrived (a
chunk was dead-lettered upstream, say) goes to the dead-letter topic with the chunks that did
arrive, so no document disappears silently. In the service the sink's produce and offset commit
form one Kafka transaction (``ANONSTREAM_TRANSACTIONAL_STAGES``): consumers reading the sanitized
topic with ``isolation_level=read_committed`` see each document exactly once.
"""
from __future__ import annotations

import base64
import hashlib
import time
from typing import Any, Sequence

from .. import serde, topics
from ..document_changes import document_changes
from ..records import Chunk
from ..stores.base import PendingChunks
from .base import ChunkStage, Emit


def fingerprint(lineage: dict[str, str]) -> str:
    """Identifies one processing of a document: the stage versions it went through."""
    text = ",".join(f"{k}@{v}" for k, v in sorted(lineage.items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class SinkStage(ChunkStage):
    name = "sink"
    version = "2"  # 2: documents carry changes
    inputs = (topics.CHUNKS_SANITIZED,)

    def __init__(self, pending: PendingChunks, max_wait_s: float = 900.0, clock=time.time, synthesis=None):
        """``synthesis`` (``synthesis.stream.MetadataSynthesis``): replace metadata fields by a draw (paper 003)."""
        self.pending = pending
        self.synthesis = synthesis
        self.max_wait_s = max_wait_s
        self.clock = clock
        # Documents emitted but not yet acknowledged: after a crash every re-delivered chunk of a
        # complete document finds all its chunks stored, and must not emit the document again.
        self._unacknowledged: set[tuple[str, str]] = set()


    def process(self, items: Sequence[tuple[Any, Chunk]]) -> list[list[Emit] | Exception]:
        out: list[list[Emit] | Exception] = []
        for _, chunk in items:
            fp = fingerprint(chunk.lineage)
            if (chunk.doc_id, fp) in self._unacknowledged or self.pending.was_emitted(chunk.doc_id, fp):
                out.append([])
                continue
            stored = self.pending.add(chunk.doc_id, chunk.chunk_index, chunk.chunk_count, chunk.to_wire(),
                                      self.clock())
            if stored < chunk.chunk_count:
                out.append([])
                continue
            self._unacknowledged.add((chunk.doc_id, fp))
            out.append([self._document(chunk.doc_id, fp)])
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
            "changes": document_changes(chunks),
        }
        if chunks[0].get("release") is not None:
            value["release"] = chunks[0]["release"]
        if self.synthesis is not None:
            value["metadata"] = self.synthesis.apply(doc_id, value["text"], value["metadata"])
        return Emit(topics.SANITIZED, f"{doc_id}|{fp}", doc_id, value)

    def tick(self, now: float) -> list[Emit]:
        return [self._incomplete(doc_id, now) for doc_id in self.pending.overdue(now - self.max_wait_s)]

    def drain(self) -> list[Emit]:
        """End of input: every document still incomplete is dead-lettered with what arrived."""
        now = self.clock()
        return [self._incomplete(doc_id, now) for doc_id in self.pending.overdue(float("inf"))]

    def _incomplete(self, doc_id: str, now: float) -> Emit:
        chunks = self.pending.take(doc_id)
        expected = chunks[0]["chunk_count"] if chunks else 0
        fp = fingerprint(chunks[0]["lineage"]) if chunks else "none"
        value = {
            "stage": self.name,
            "stage_version": self.version,
            "error_class": "IncompleteDocument",
            "error_message": f"{len(chunks)} of {expected} chunks after {self.max_wait_s:.0f} s",
            "source": {"topic": topics.CHUNKS_SANITIZED.suffix, "partition": -1, "offset": -1, "key_b64": None},
            "original_b64": base64.b64encode(serde.dumps(chunks)).decode(),
            "failed_at": now,
        }
        return Emit(topics.DEAD_LETTER, f"{doc_id}|{fp}|incomplete", doc_id, value)

    def after_produced(self, emits: Sequence[Emit]) -> None:
        for emit in emits:
            if emit.topic is topics.SANITIZED:
                doc_id, fp = emit.key.rsplit("|", 1)
                self.pending.mark_emitted(doc_id, fp)
                self._unacknowledged.discard((doc_id, fp))
            elif emit.topic is topics.DEAD_LETTER and emit.value["error_class"] == "IncompleteDocument":
                doc_id, fp, _ = emit.key.rsplit("|", 2)
                self.pending.mark_emitted(doc_id, fp)
