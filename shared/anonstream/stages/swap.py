"""swap: named-entity swapping between similar chunks of different documents (paper 000).

Until the swapping core is wired in, the stage releases every chunk unchanged (``changes`` empty);
the sink reassembles the documents in chunk order.
"""
from __future__ import annotations

from typing import Any, Sequence

from .. import topics
from ..records import Chunk
from .base import Emit, Stage
from .ingest import chunk_emit


class PassThroughSwapStage(Stage):
    name = "swap"
    version = "0"
    inputs = (topics.CHUNKS_CLUSTERED,)

    def decode(self, topic, obj: dict[str, Any]) -> Chunk:
        return Chunk.from_wire(obj)

    def process(self, items: Sequence[tuple[Any, Chunk]]) -> list[list[Emit] | Exception]:
        out: list[list[Emit] | Exception] = []
        for _, chunk in items:
            chunk.changes = []
            chunk.embedding = None  # the sanitized topic does not carry embeddings
            chunk.lineage[self.name] = self.version
            out.append([chunk_emit(topics.CHUNKS_SANITIZED, chunk)])
        return out
