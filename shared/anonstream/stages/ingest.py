"""ingest: a validated document becomes its chunks (runs of consecutive sentences)."""
from __future__ import annotations

from typing import Any, Sequence

from .. import topics
from ..records import Chunk, Document
from ..segment import chunk_spans
from .base import Emit, Stage


class IngestStage(Stage):
    name = "ingest"
    version = "2"
    inputs = (topics.DOCUMENTS,)

    def __init__(self, max_chars: int = 1200, max_sentences: int = 8):
        self.max_chars = max_chars
        self.max_sentences = max_sentences

    def decode(self, topic, obj: dict[str, Any]) -> Document:
        return Document.from_wire(obj)

    def chunks(self, document: Document) -> list[Chunk]:
        spans = chunk_spans(document.text, self.max_chars, self.max_sentences)
        return [
            Chunk(
                doc_id=document.doc_id,
                chunk_index=i,
                chunk_count=len(spans),
                text=document.text[span.start:span.end],
                doc_start=span.start,
                sentence_count=span.sentence_count,
                metadata=document.metadata,
                lineage={self.name: self.version},
            )
            for i, span in enumerate(spans)
        ]

    def process(self, items: Sequence[tuple[Any, Document]]) -> list[list[Emit] | Exception]:
        return [[chunk_emit(topics.CHUNKS, c) for c in self.chunks(doc)] for _, doc in items]


def chunk_emit(topic: topics.Topic, chunk: Chunk) -> Emit:
    return Emit(topic, chunk.key, chunk.doc_id, chunk.to_wire())
