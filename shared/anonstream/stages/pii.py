"""pii: detect personal information and replace what the policy masks now — per document.

Masking decisions are per entity, and an entity's mentions can be spread over a document's chunks
("Mr Cengiz Polat" in the first chunk, "Polat" in the fifth), so the stage waits until it holds all
chunks of a document, then processes them together with one entity registry. Once a document's entities are typed, its named values are counted per protected identity and the QUASI ones that
enough identities mention are released as written (``commonness.release_common``; the release's ``identity_field``,
``common_k`` and ``common_share``): the decision is per entity, so every chunk of the document agrees. Waiting chunks are kept
in a ``DocumentStateStore`` (Redis in the service: written before the input offsets are committed, so
a restart loses nothing) and forgotten only after the document's outputs are acknowledged.
"""
from __future__ import annotations

from typing import Any, Sequence

from .. import topics
from ..commonness import CommonRule, InMemoryValueCounts, ValueCounts, identity_of, release_common
from ..pii.engine import DocumentEntities, PiiEngine, PseudonymStore
from ..pii.gazetteer import alpha2
from ..pii.kinds import assign_countries, settle_unconfirmed_places
from ..records import Chunk
from ..stores.base import DocumentStateStore
from .base import ChunkStage, Emit
from .ingest import chunk_emit


class PiiStage(ChunkStage):
    name = "pii"
    version = "1"
    inputs = (topics.CHUNKS,)

    def __init__(self, engine: PiiEngine, pseudonyms: PseudonymStore, states: DocumentStateStore,
                 namespace: str = "default", values: ValueCounts | None = None, common: CommonRule = CommonRule(),
                 identity_field: str | None = None):
        self.engine = engine
        self.pseudonyms = pseudonyms
        self.states = states
        self.namespace = namespace
        self.values = values if values is not None else InMemoryValueCounts()
        self.common = common
        self.identity_field = identity_field
        self.released_common = 0


    def process(self, items: Sequence[tuple[Any, Chunk]]) -> list[list[Emit] | Exception]:
        waiting: dict[str, dict[str, Any]] = {}
        out: list[list[Emit] | Exception] = []
        for _, chunk in items:
            state = waiting.get(chunk.doc_id) or self.states.get(chunk.doc_id) or {"chunks": {}}
            if state.get("complete"):  # a re-delivered chunk of a document done in this batch
                out.append([])
                continue
            state["chunks"][str(chunk.chunk_index)] = chunk.to_wire()
            waiting[chunk.doc_id] = state
            if len(state["chunks"]) < chunk.chunk_count:
                out.append([])
                continue
            try:
                out.append(self._document([Chunk.from_wire(state["chunks"][str(i)])
                                           for i in range(chunk.chunk_count)]))
            except Exception as exc:  # noqa: BLE001 - the completing chunk carries the failure
                out.append(exc)
            state["complete"] = True
        for doc_id, state in waiting.items():
            if not state.get("complete"):
                self.states.put(doc_id, state)
        return out

    def _document(self, chunks: list[Chunk]) -> list[Emit]:
        registry = DocumentEntities(chunks[0].doc_id)
        results = self.engine.process_many([c.text for c in chunks], [registry] * len(chunks),
                                           self.pseudonyms, self.namespace)
        all_spans = [span for _, spans in results for span in spans]
        settle_unconfirmed_places(all_spans)
        assign_countries(all_spans, alpha2(registry.dominant_country()))
        identity = identity_of(chunks[0].metadata, chunks[0].doc_id, self.identity_field)
        self.released_common += release_common(all_spans, identity, self.values, self.common)
        emits = []
        for chunk, (text, spans) in zip(chunks, results):
            chunk.text = text
            chunk.entities = spans
            chunk.lineage[self.name] = self.version
            emits.append(chunk_emit(topics.CHUNKS_PII, chunk))
        return emits

    def metrics(self) -> dict[str, Any]:
        return {"released_common": self.released_common}

    def after_produced(self, emits: Sequence[Emit]) -> None:
        for emit in emits:
            if emit.topic is topics.CHUNKS_PII and emit.value["chunk_index"] == emit.value["chunk_count"] - 1:
                self.states.delete(emit.value["doc_id"])
