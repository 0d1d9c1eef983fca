"""swap: named-entity swapping between similar chunks of different documents (paper 000), with
generalization or suppression as the fallback where no partner comes within the wait bound.

The pairing logic is ``swap.SwapProcessor``; this stage only maps it onto the stage contract:
``process`` offers chunks, ``tick`` applies the wait bound, ``drain`` releases everything at the end
of an embedded run. Outputs that consumed pooled chunks sit in the processor's outbox until the
shell reports them produced (``after_produced`` → ``ack``); after a crash ``recover`` re-emits them.
The swap log (pair ids, old and new values) goes to the restricted swap-log topic only.
"""
from __future__ import annotations

from typing import Any, Sequence

from .. import topics
from ..records import Chunk
from ..swap import SwapOutput, SwapProcessor
from .base import ChunkStage, Emit
from .ingest import chunk_emit


class SwapStage(ChunkStage):
    name = "swap"
    version = "1"
    inputs = (topics.CHUNKS_CLUSTERED,)

    def __init__(self, processor: SwapProcessor):
        self.processor = processor
        self._tokens: list[str] = []
        self._recovered = False
        self.counts: dict[str, int] = {}


    def _emits(self, out: SwapOutput) -> list[Emit]:
        self._tokens += out.tokens
        released_tuples = {record["chunk_key"]: record["tuple_after"] for record in out.log}
        emits = []
        for chunk in out.chunks:
            chunk.entity_tuple = released_tuples.get(chunk.key)  # released values only, never the originals
            chunk.embedding = None  # the sanitized topic carries no embeddings
            chunk.lineage[self.name] = f"{self.version}+{self.processor.release.version}"
            emits.append(chunk_emit(topics.CHUNKS_SANITIZED, chunk))
        for record in out.log:
            action = record.get("action", "unknown")
            self.counts[action] = self.counts.get(action, 0) + 1
            emits.append(Emit(topics.SWAP_LOG, f"{record['chunk_key']}|log", record["doc_id"], record))
        return emits

    def process(self, items: Sequence[tuple[Any, Chunk]]) -> list[list[Emit] | Exception]:
        recovered: list[Emit] = []
        if not self._recovered:  # outputs of claims that never reached the broker before a crash
            self._recovered = True
            recovered = self._emits(self.processor.recover())
        results: list[list[Emit] | Exception] = []
        for _, chunk in items:
            results.append(recovered + self._emits(self.processor.offer(chunk)))
            recovered = []
        return results

    def tick(self, now: float) -> list[Emit]:
        return self._emits(self.processor.expire(now))

    def drain(self) -> list[Emit]:
        return self._emits(self.processor.drain())

    def after_produced(self, emits: Sequence[Emit]) -> None:
        self.processor.ack(self._tokens)
        self._tokens = []

    def metrics(self) -> dict[str, Any]:
        return {"released_by_action": dict(self.counts), "release_version": self.processor.release.version}
