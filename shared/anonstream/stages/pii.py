"""pii: detect personal information in a chunk and replace what the policy masks now.

Entity grouping is per document and the chunks of a document arrive in order (they share a
partition), so the document's entity registry is kept in a ``DocumentStateStore`` between chunks.
"""
from __future__ import annotations

from typing import Any, Sequence

from .. import topics
from ..pii.engine import DocumentEntities, PiiEngine, PseudonymStore
from ..records import Chunk
from ..stores.base import DocumentStateStore
from .base import Emit, Stage
from .ingest import chunk_emit


class PiiStage(Stage):
    name = "pii"
    version = "1"
    inputs = (topics.CHUNKS,)

    def __init__(self, engine: PiiEngine, pseudonyms: PseudonymStore, states: DocumentStateStore,
                 namespace: str = "default"):
        self.engine = engine
        self.pseudonyms = pseudonyms
        self.states = states
        self.namespace = namespace

    def decode(self, topic, obj: dict[str, Any]) -> Chunk:
        return Chunk.from_wire(obj)

    def process(self, items: Sequence[tuple[Any, Chunk]]) -> list[list[Emit] | Exception]:
        chunks = [chunk for _, chunk in items]
        registries: dict[str, DocumentEntities] = {}
        for chunk in chunks:
            if chunk.doc_id not in registries:
                state = self.states.get(chunk.doc_id)
                registries[chunk.doc_id] = (
                    DocumentEntities.from_state(state) if state else DocumentEntities(chunk.doc_id)
                )
        results = self.engine.process_many(
            [c.text for c in chunks], [registries[c.doc_id] for c in chunks], self.pseudonyms, self.namespace
        )
        finished = {c.doc_id for c in chunks if c.chunk_index == c.chunk_count - 1}
        for doc_id, registry in registries.items():
            if doc_id in finished:
                self.states.delete(doc_id)
            else:
                self.states.put(doc_id, registry.to_state())
        out: list[list[Emit] | Exception] = []
        for chunk, (text, spans) in zip(chunks, results):
            chunk.text = text
            chunk.entities = spans
            chunk.lineage[self.name] = self.version
            out.append([chunk_emit(topics.CHUNKS_PII, chunk)])
        return out
