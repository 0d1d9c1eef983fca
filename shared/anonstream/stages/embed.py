"""embed: attach a unit-norm sentence embedding to every chunk (one encoder call per batch)."""
from __future__ import annotations

from typing import Any, Sequence

from .. import topics
from ..embedding import Embedder
from ..records import Chunk
from .base import ChunkStage, Emit
from .ingest import chunk_emit


class EmbedStage(ChunkStage):
    name = "embed"
    version = "1"
    inputs = (topics.CHUNKS_PII,)

    def __init__(self, embedder: Embedder):
        self.embedder = embedder


    def process(self, items: Sequence[tuple[Any, Chunk]]) -> list[list[Emit] | Exception]:
        chunks = [chunk for _, chunk in items]
        vectors = self.embedder.encode([c.text for c in chunks])
        out: list[list[Emit] | Exception] = []
        for chunk, vector in zip(chunks, vectors):
            chunk.embedding = {"model": self.embedder.model_name, "dim": self.embedder.dim, "vector": vector.tolist()}
            chunk.lineage[self.name] = self.version
            out.append([chunk_emit(topics.CHUNKS_EMBEDDED, chunk)])
        return out
